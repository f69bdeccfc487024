import type { OcppCall } from '../ocpp/central-system.js';
import { LastN } from '../shared/last-n.js';

export interface RecentCall extends OcppCall {
  /** When the call was answered (or gave up), ISO. */
  at: string;
}

/** Calls kept per charger: what an operator looks at to see what a charger just did. */
const CALLS_PER_CHARGER = 50;
/** Chargers remembered at most (a site's chargers, with room for ones retired since). */
const CHARGERS_KEPT = 5_000;

/** A call as held: its time stays a number until someone reads it. */
type Held = OcppCall & { atMs: number };

/**
 * The last OCPP calls of each charger, in memory: action, direction, outcome and duration only,
 * never a payload (a payload may hold an id token or a password), so nothing secret is kept.
 * Recorded on every call of every charger and read only when an operator looks: an entry is a
 * handful of numbers and shared strings (its ISO time is made on reading), and a full ring is
 * written over in place.
 */
export class RecentCalls {
  private readonly byCharger = new Map<string, LastN<Held>>();

  record(chargerId: string, call: OcppCall, atMs: number): void {
    let ring = this.byCharger.get(chargerId);
    if (!ring) {
      if (this.byCharger.size >= CHARGERS_KEPT) {
        const oldest = this.byCharger.keys().next().value;
        if (oldest !== undefined) this.byCharger.delete(oldest);
      }
      ring = new LastN(CALLS_PER_CHARGER);
      this.byCharger.set(chargerId, ring);
    }
    ring.push({
      action: call.action,
      direction: call.direction,
      outcome: call.outcome,
      seconds: call.seconds,
      atMs,
    });
  }

  /** Newest first. */
  of(chargerId: string): RecentCall[] {
    const ring = this.byCharger.get(chargerId);
    if (!ring) return [];
    return ring
      .oldestFirst()
      .map(({ atMs, ...call }) => ({ ...call, at: new Date(atMs).toISOString() }))
      .reverse();
  }
}
