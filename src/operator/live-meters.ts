import type { ChargerEventListener } from '../charging/charger-event-dispatcher.js';
import type { MeterSample } from '../ocpp/port.js';
import { NumberRing } from '../shared/number-ring.js';

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

/** A reading as held: its arrival time stays a number until someone reads it. */
type Held = Omit<LiveReading, 'receivedAt'> & { receivedAtMs: number };

const ENERGY_WH = 0;
const POWER_W = 1;
const SOC_PERCENT = 2;
/** The charger's clock, in ms: the adapters hand it over as ISO UTC with milliseconds. */
const TIMESTAMP_MS = 3;
const RECEIVED_AT_MS = 4;

/** One transaction's samples: numbers in a ring, and any charger clock that was not ISO. */
interface Samples {
  transactionRef: string;
  ring: NumberRing;
  /** By record: a timestamp the adapter could not read as a date, kept as sent (rare: made then). */
  odd: Map<number, string> | null;
}

function shown({ receivedAtMs, ...reading }: Held): LiveReading {
  return { ...reading, receivedAt: new Date(receivedAtMs).toISOString() };
}

/** The instant an ISO string names, when printing that instant gives the same string back. */
function isoMs(timestamp: string): number | null {
  const ms = Date.parse(timestamp);
  return Number.isFinite(ms) && new Date(ms).toISOString() === timestamp ? ms : null;
}

/**
 * What the chargers' meters said last, per connector, and the last samples of each transaction,
 * held in memory only: the gateway does not write every sample to disk (the session row keeps
 * the register that matters for money), so after a restart this starts empty. Every sample of
 * every charger passes here and is read only when an operator looks: a transaction's samples are
 * numbers in a ring allocated as it fills (4.8 KB when full), no object or string per sample
 * (docs/benchmarks.md).
 */
export class LiveMeters implements ChargerEventListener {
  private readonly latest = new Map<string, Held>();
  private readonly byTransaction = new Map<string, Samples>();

  record(sample: MeterSample): void {
    if (sample.live) {
      this.latest.set(`${sample.chargerId}\u0000${sample.connectorId}`, {
        energyWh: sample.energyWh,
        powerW: sample.powerW,
        socPercent: sample.socPercent,
        timestamp: sample.timestamp,
        receivedAtMs: sample.receivedAtMs,
        transactionRef: sample.transactionRef,
      });
    }
    if (sample.transactionRef === null) return;
    const key = `${sample.chargerId}\u0000${sample.transactionRef}`;
    let samples = this.byTransaction.get(key);
    if (!samples) {
      if (this.byTransaction.size >= TRANSACTIONS_KEPT) {
        const oldest = this.byTransaction.keys().next().value;
        if (oldest !== undefined) this.byTransaction.delete(oldest);
      }
      samples = {
        transactionRef: sample.transactionRef,
        ring: new NumberRing(SAMPLES_PER_TRANSACTION, 5),
        odd: null,
      };
      this.byTransaction.set(key, samples);
    }
    const { ring } = samples;
    const r = ring.claim();
    const timestampMs = isoMs(sample.timestamp);
    if (timestampMs === null) (samples.odd ??= new Map()).set(r, sample.timestamp);
    else samples.odd?.delete(r);
    ring.write(r, ENERGY_WH, sample.energyWh);
    ring.write(r, POWER_W, sample.powerW);
    ring.write(r, SOC_PERCENT, sample.socPercent);
    ring.write(r, TIMESTAMP_MS, timestampMs);
    ring.write(r, RECEIVED_AT_MS, sample.receivedAtMs);
  }

  connector(chargerId: string, connectorId: string): LiveReading | undefined {
    const held = this.latest.get(`${chargerId}\u0000${connectorId}`);
    return held && shown(held);
  }

  /** Oldest first. */
  transaction(chargerId: string, transactionRef: string): readonly LiveReading[] {
    const samples = this.byTransaction.get(`${chargerId}\u0000${transactionRef}`);
    if (!samples) return [];
    const { ring, odd } = samples;
    return ring.oldestFirst().map((r) => {
      const timestampMs = ring.read(r, TIMESTAMP_MS);
      return {
        energyWh: ring.read(r, ENERGY_WH),
        powerW: ring.read(r, POWER_W),
        socPercent: ring.read(r, SOC_PERCENT),
        timestamp: timestampMs === null ? (odd?.get(r) ?? '') : new Date(timestampMs).toISOString(),
        transactionRef: samples.transactionRef,
        receivedAt: new Date(ring.read(r, RECEIVED_AT_MS) as number).toISOString(),
      };
    });
  }

  /** Every sample of every charger, after the lifecycle had it. */
  meterSample(sample: MeterSample): void {
    this.record(sample);
  }
}
