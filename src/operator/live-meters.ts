import { tapChargerEvents } from '../ocpp/event-tap.js';
import type { ChargerEvents, MeterSample } from '../ocpp/port.js';

export interface LiveReading {
  energyWh: number | null;
  powerW: number | null;
  socPercent: number | null;
  timestamp: string;
  receivedAt: string;
  transactionRef: string | null;
}

/** Samples kept per transaction for a session's story: about 30 min at a 15 s interval. */
const SAMPLES_PER_TRANSACTION = 120;
/** Transactions whose samples are kept (oldest forgotten first). */
const TRANSACTIONS_KEPT = 2_000;

/**
 * What the chargers' meters said last, per connector, and the last samples of each transaction,
 * held in memory only: the gateway does not write every sample to disk (the session row keeps
 * the register that matters for money), so after a restart this starts empty.
 */
export class LiveMeters {
  private readonly latest = new Map<string, LiveReading>();
  private readonly byTransaction = new Map<string, LiveReading[]>();

  record(sample: MeterSample): void {
    const reading: LiveReading = {
      energyWh: sample.energyWh,
      powerW: sample.powerW,
      socPercent: sample.socPercent,
      timestamp: sample.timestamp,
      receivedAt: new Date(sample.receivedAtMs).toISOString(),
      transactionRef: sample.transactionRef,
    };
    if (sample.live) this.latest.set(`${sample.chargerId}\u0000${sample.connectorId}`, reading);
    if (sample.transactionRef === null) return;
    const key = `${sample.chargerId}\u0000${sample.transactionRef}`;
    let samples = this.byTransaction.get(key);
    if (!samples) {
      if (this.byTransaction.size >= TRANSACTIONS_KEPT) {
        const oldest = this.byTransaction.keys().next().value;
        if (oldest !== undefined) this.byTransaction.delete(oldest);
      }
      samples = [];
      this.byTransaction.set(key, samples);
    }
    samples.push(reading);
    if (samples.length > SAMPLES_PER_TRANSACTION) samples.shift();
  }

  connector(chargerId: string, connectorId: string): LiveReading | undefined {
    return this.latest.get(`${chargerId}\u0000${connectorId}`);
  }

  transaction(chargerId: string, transactionRef: string): readonly LiveReading[] {
    return this.byTransaction.get(`${chargerId}\u0000${transactionRef}`) ?? [];
  }

  /** The charger port's events, passed on unchanged, with every meter sample also seen here. */
  observe(events: ChargerEvents): ChargerEvents {
    return tapChargerEvents(events, { meterSample: (sample) => this.record(sample) });
  }
}
