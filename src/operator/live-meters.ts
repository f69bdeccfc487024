import { tapChargerEvents } from '../ocpp/event-tap.js';
import type { ChargerEvents, MeterSample } from '../ocpp/port.js';
import { LastN } from '../shared/last-n.js';

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

function shown({ receivedAtMs, ...reading }: Held): LiveReading {
  return { ...reading, receivedAt: new Date(receivedAtMs).toISOString() };
}

/**
 * What the chargers' meters said last, per connector, and the last samples of each transaction,
 * held in memory only: the gateway does not write every sample to disk (the session row keeps
 * the register that matters for money), so after a restart this starts empty. Every sample of
 * every charger passes here and is read only when an operator looks: a held reading shares the
 * sample's strings, its ISO arrival time is made on reading, and a full ring is written over in
 * place.
 */
export class LiveMeters {
  private readonly latest = new Map<string, Held>();
  private readonly byTransaction = new Map<string, LastN<Held>>();

  record(sample: MeterSample): void {
    const reading: Held = {
      energyWh: sample.energyWh,
      powerW: sample.powerW,
      socPercent: sample.socPercent,
      timestamp: sample.timestamp,
      receivedAtMs: sample.receivedAtMs,
      transactionRef: sample.transactionRef,
    };
    if (sample.live) this.latest.set(`${sample.chargerId}\u0000${sample.connectorId}`, reading);
    if (sample.transactionRef === null) return;
    const key = `${sample.chargerId}\u0000${sample.transactionRef}`;
    let ring = this.byTransaction.get(key);
    if (!ring) {
      if (this.byTransaction.size >= TRANSACTIONS_KEPT) {
        const oldest = this.byTransaction.keys().next().value;
        if (oldest !== undefined) this.byTransaction.delete(oldest);
      }
      ring = new LastN(SAMPLES_PER_TRANSACTION);
      this.byTransaction.set(key, ring);
    }
    ring.push(reading);
  }

  connector(chargerId: string, connectorId: string): LiveReading | undefined {
    const held = this.latest.get(`${chargerId}\u0000${connectorId}`);
    return held && shown(held);
  }

  /** Oldest first. */
  transaction(chargerId: string, transactionRef: string): readonly LiveReading[] {
    const ring = this.byTransaction.get(`${chargerId}\u0000${transactionRef}`);
    return ring ? ring.oldestFirst().map(shown) : [];
  }

  /** The charger port's events, passed on unchanged, with every meter sample also seen here. */
  observe(events: ChargerEvents): ChargerEvents {
    return tapChargerEvents(events, { meterSample: (sample) => this.record(sample) });
  }
}
