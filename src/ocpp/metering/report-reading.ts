import type { MeterReading } from './meter-reading.js';
import type { AdapterContext } from '../protocol-adapter.js';

/**
 * What every adapter does with a meter reading, whichever message carried it: a live SoC is the
 * vehicle's current state (for quotes), and the reading goes to the charging layer as a sample,
 * placed in time by the charger's clock offset (charger-clocks.ts), which also says whether it was
 * sent live or replayed from a queue. `transactionRef` is null for readings outside a session's
 * transaction; `flaggedOffline`: what the message said of being queued (2.0.1 `offline`),
 * undefined when it cannot say.
 */
export function reportReading(
  ctx: AdapterContext,
  connectorId: string,
  reading: MeterReading,
  transactionRef: string | null,
  flaggedOffline: boolean | undefined,
): void {
  // Read there because it was the charger's only energy value: counted, and logged once.
  if (reading.energyLocation !== undefined) {
    ctx.reports.deviation(
      'MeterValue sampledValue[].location energy_not_at_outlet',
      reading.energyLocation,
    );
  }
  const receivedAtMs = ctx.clock.now();
  const time = ctx.clocks.observe(ctx.chargerId, reading.timestamp, receivedAtMs, flaggedOffline);
  // A queued (offline) sample describes the past: it must not overwrite the vehicle's SoC now.
  if (time.live && reading.socPercent !== null) {
    ctx.reports.vehicle(
      connectorId,
      { socPercent: reading.socPercent },
      new Date(receivedAtMs).toISOString(),
    );
  }
  ctx.events().meterSample({
    chargerId: ctx.chargerId,
    connectorId,
    transactionRef,
    energyWh: reading.energyWh,
    powerW: reading.powerW,
    socPercent: reading.socPercent,
    timestamp: reading.timestamp,
    receivedAtMs,
    time: { stampMs: time.stampMs, measuredAtMs: time.atMs, epoch: time.epoch },
    live: time.live,
  });
}
