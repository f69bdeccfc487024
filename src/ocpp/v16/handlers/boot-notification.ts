import type { BootNotificationReq } from '../messages.js';
import type { ConnectionContext16 } from '../connection-context.js';

export function bootNotification({ ctx, now }: ConnectionContext16, req: BootNotificationReq) {
  ctx.reports.booted({
    vendor: req.chargePointVendor,
    model: req.chargePointModel,
    serialNumber: req.chargePointSerialNumber ?? req.chargeBoxSerialNumber ?? null,
    firmwareVersion: req.firmwareVersion ?? null,
  });
  return { status: 'Accepted', currentTime: now(), interval: ctx.heartbeatIntervalSeconds };
}
