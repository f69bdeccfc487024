import type { NotifyEVChargingNeedsReq } from '../messages.js';
import type { ConnectionContext201 } from '../connection-context.js';

export function notifyEVChargingNeeds(
  { ctx, connectorIdOf, now }: ConnectionContext201,
  req: NotifyEVChargingNeedsReq,
) {
  const connectorId = connectorIdOf(req.evseId);
  const dc = req.chargingNeeds.dcChargingParameters;
  if (connectorId && dc) {
    ctx.reports.vehicle(
      connectorId,
      {
        ...(dc.stateOfCharge !== undefined && { socPercent: dc.stateOfCharge }),
        ...(dc.evEnergyCapacity !== undefined &&
          dc.evEnergyCapacity > 0 && { batteryWh: dc.evEnergyCapacity }),
      },
      now(),
    );
  }
  // Accepted: we take note; the gateway sends no charging schedule of its own.
  return { status: 'Accepted' };
}
