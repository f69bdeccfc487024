import type { AdapterContext } from '../protocol-adapter.js';
import type { ScreenOutcome } from '../port.js';
import type { ScreenWay } from '../charger-state/screen-support.js';
import { callForReply } from './operator-call.js';

/**
 * Sends one screen message the charger advertised and judges its answer: a status in `taken` is
 * sent; `passing` statuses (the moment was wrong, not the message: a transaction the charger
 * already ended) are neither taken nor remembered; anything else, a CALLERROR or no answer, is
 * remembered as refused (charger-state/screen-support.ts) so that it is not sent again until the
 * charger boots. Sent on the next turn, after the answer the charger may be waiting for.
 */
export async function sendScreenCall(
  ctx: AdapterContext,
  way: ScreenWay,
  method: string,
  params: unknown,
  o: { taken?: readonly string[]; passing?: readonly string[] } = {},
): Promise<ScreenOutcome> {
  await new Promise<void>((resolve) => setTimeout(resolve, 0));
  let status: string;
  try {
    status = (await callForReply({ ctx }, method, params)).status;
  } catch (err) {
    status = `no answer: ${(err as Error).message}`;
  }
  if ((o.taken ?? ['Accepted']).includes(status)) return 'sent';
  if (o.passing?.includes(status)) {
    ctx.reports.noted(method, `screen message not shown now: ${status}`);
    return 'refused';
  }
  ctx.screens.refused(ctx.chargerId, way, status);
  return 'refused';
}

/** Only printable ASCII: the one format every screen takes (2.0.1 MessageFormat ASCII). */
export function asciiText(text: string, maxLength: number): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, maxLength);
}
