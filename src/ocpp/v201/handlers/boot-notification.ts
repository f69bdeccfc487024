import type { BootNotificationReq } from '../messages.js';
import type { ConnectionContext201 } from '../connection-context.js';

export function bootNotification({ ctx, now }: ConnectionContext201, req: BootNotificationReq) {
  ctx.reports.booted({
    vendor: req.chargingStation.vendorName,
    model: req.chargingStation.model,
    serialNumber: req.chargingStation.serialNumber ?? null,
    firmwareVersion: req.chargingStation.firmwareVersion ?? null,
  });
  return { status: 'Accepted', currentTime: now(), interval: ctx.heartbeatIntervalSeconds };
}
