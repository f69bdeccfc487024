import type { DataTransferReq } from '../messages.js';
import type { ConnectionContext201 } from '../connection-context.js';

export function dataTransfer({ ctx }: ConnectionContext201, req: DataTransferReq) {
  ctx.reports.noted('DataTransfer', `vendor ${req.vendorId}`, req);
  return { status: 'UnknownVendorId' };
}
