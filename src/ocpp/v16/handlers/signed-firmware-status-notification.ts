import type { ConnectionContext16 } from '../connection-context.js';

/** Progress of a SignedUpdateFirmware (security whitepaper); it names its job, as 2.0.1 does. */
export function signedFirmwareStatusNotification(
  { ctx }: ConnectionContext16,
  req: { status: string; requestId?: number },
) {
  ctx.reports.transfer({ kind: 'firmware', status: req.status, requestId: req.requestId ?? null });
  return {};
}
