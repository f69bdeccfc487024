import type { DataTransferReq } from '../messages.js';
import type { Session16 } from '../connection-context.js';

export function dataTransfer({ ctx }: Session16, req: DataTransferReq) {
  ctx.reports.noted('DataTransfer', `vendor ${req.vendorId}`, req);
  return { status: 'UnknownVendorId' };
}
