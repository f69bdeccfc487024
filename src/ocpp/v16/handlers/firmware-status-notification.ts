import type { ConnectionContext16 } from '../connection-context.js';

/** Firmware progress; 1.6 names no job, so it belongs to the charger's latest one. */
export function firmwareStatusNotification({ ctx }: ConnectionContext16, req: { status: string }) {
  ctx.reports.transfer({ kind: 'firmware', status: req.status, requestId: null });
  return {};
}
