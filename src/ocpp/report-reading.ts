import type { MeterReading } from './meter-reading.js';
import type { AdapterContext } from './protocol-session.js';

/**
 * What every adapter does with a meter reading, whichever message carried it: a live SoC is the
 * vehicle's current state (for quotes), and the reading goes to the charging layer as a sample.
 * `transactionRef` is null for readings outside a session's transaction.
 */
export function reportReading(
  ctx: AdapterContext,
  connectorId: string,
  reading: MeterReading,
  transactionRef: string | null,
  live: boolean,
): void {
  // Read there because it was the charger's only energy value: counted, and logged once.
  if (reading.energyLocation !== undefined) {
    ctx.reports.deviation(
      'MeterValue sampledValue[].location energy_not_at_outlet',
      reading.energyLocation,
    );
  }
  const at = new Date(ctx.clock.now()).toISOString();
  // A queued (offline) sample describes the past: it must not overwrite the vehicle's SoC now.
  if (live && reading.socPercent !== null) {
    ctx.reports.vehicle(connectorId, { socPercent: reading.socPercent }, at);
  }
  ctx.events().meterSample({
    chargerId: ctx.chargerId,
    connectorId,
    transactionRef,
    energyWh: reading.energyWh,
    powerW: reading.powerW,
    socPercent: reading.socPercent,
    timestamp: reading.timestamp,
    receivedAtMs: ctx.clock.now(),
    live,
  });
}
