import type { OcppCall } from '../ocpp/central-system.js';

export interface RecentCall extends OcppCall {
  /** When the call was answered (or gave up), ISO. */
  at: string;
}

/** Calls kept per charger: what an operator looks at to see what a charger just did. */
const CALLS_PER_CHARGER = 50;
/** Chargers remembered at most (a site's chargers, with room for ones retired since). */
const CHARGERS_KEPT = 5_000;

/**
 * The last OCPP calls of each charger, in memory: action, direction, outcome and duration only,
 * never a payload (a payload may hold an id token or a password), so nothing secret is kept.
 */
export class RecentCalls {
  private readonly byCharger = new Map<string, RecentCall[]>();

  record(chargerId: string, call: OcppCall, atMs: number): void {
    let calls = this.byCharger.get(chargerId);
    if (!calls) {
      if (this.byCharger.size >= CHARGERS_KEPT) {
        const oldest = this.byCharger.keys().next().value;
        if (oldest !== undefined) this.byCharger.delete(oldest);
      }
      calls = [];
      this.byCharger.set(chargerId, calls);
    }
    calls.push({ ...call, at: new Date(atMs).toISOString() });
    if (calls.length > CALLS_PER_CHARGER) calls.shift();
  }

  /** Newest first. */
  of(chargerId: string): RecentCall[] {
    return [...(this.byCharger.get(chargerId) ?? [])].reverse();
  }
}
