import type { ConnectionContext201 } from '../connection-context.js';

/** Log upload progress of the GetLog that `requestId` names (absent when Idle). */
export function logStatusNotification(
  { ctx }: ConnectionContext201,
  req: { status: string; requestId?: number },
) {
  ctx.reports.transfer({ kind: 'log', status: req.status, requestId: req.requestId ?? null });
  return {};
}
