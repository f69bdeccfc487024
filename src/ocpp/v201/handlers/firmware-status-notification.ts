import type { ConnectionContext201 } from '../connection-context.js';

/** Firmware progress of the UpdateFirmware that `requestId` names (absent when Idle). */
export function firmwareStatusNotification(
  { ctx }: ConnectionContext201,
  req: { status: string; requestId?: number },
) {
  ctx.reports.transfer({ kind: 'firmware', status: req.status, requestId: req.requestId ?? null });
  return {};
}
