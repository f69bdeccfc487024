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
