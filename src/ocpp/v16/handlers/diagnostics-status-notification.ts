import type { ConnectionContext16 } from '../connection-context.js';

/** Diagnostics upload progress; 1.6 names no job, so it belongs to the charger's latest one. */
export function diagnosticsStatusNotification(
  { ctx }: ConnectionContext16,
  req: { status: string },
) {
  ctx.reports.transfer({ kind: 'log', status: req.status, requestId: null });
  return {};
}
