import type { OcppCall } from '../ocpp/central-system.js';
import type { OcppDirection, OcppOutcome } from '../ocpp/connection/observed-connection.js';
import { NumberRing } from '../shared/number-ring.js';

export interface RecentCall extends OcppCall {
  /** When the call was answered (or gave up), ISO. */
  at: string;
}

/** Calls kept per charger: what an operator looks at to see what a charger just did. */
const CALLS_PER_CHARGER = 50;
/** Chargers remembered at most (a site's chargers, with room for ones retired since). */
const CHARGERS_KEPT = 5_000;
/**
 * Action names numbered for every ring. OCPP 1.6 and 2.0.1 have fewer than a hundred; past this a
 * charger is inventing them, and its names are held as they came, by record (still bounded).
 */
const NAMES_KEPT = 1_024;
const UNLISTED = -1;

const DIRECTIONS: readonly OcppDirection[] = ['in', 'out'];
const OUTCOMES: readonly OcppOutcome[] = ['ok', 'error', 'timeout'];
/** Direction and outcome, one of KINDS. */
const KINDS = DIRECTIONS.length * OUTCOMES.length;
/** The action's number and the call's kind in one field: action × KINDS + kind. */
const WHAT = 0;
const SECONDS = 1;
const AT_MS = 2;
const FIELDS = 3;

/** One charger's calls: numbers in a ring, and any action name past the numbered ones. */
interface Calls {
  ring: NumberRing;
  /** By record, made on first use (rare). */
  unlisted: Map<number, string> | null;
}

/**
 * The last OCPP calls of each charger, in memory: action, direction, outcome and duration only,
 * never a payload (a payload may hold an id token or a password), so nothing secret is kept.
 * Recorded on every call of every charger, read only when an operator looks: a charger's calls
 * are numbers in a ring allocated as it fills (1.2 KB when full), an action a number into a table
 * every charger shares, held with the call's direction and outcome in one field (docs/benchmarks.md).
 */
export class RecentCalls {
  private readonly byCharger = new Map<string, Calls>();
  private readonly codes = new Map<string, number>();
  private readonly names: string[] = [];

  record(chargerId: string, call: OcppCall, atMs: number): void {
    let calls = this.byCharger.get(chargerId);
    if (!calls) {
      if (this.byCharger.size >= CHARGERS_KEPT) {
        const oldest = this.byCharger.keys().next().value;
        if (oldest !== undefined) this.byCharger.delete(oldest);
      }
      calls = { ring: new NumberRing(CALLS_PER_CHARGER, FIELDS), unlisted: null };
      this.byCharger.set(chargerId, calls);
    }
    const r = calls.ring.claim();
    const code = this.code(call.action);
    if (code === UNLISTED) (calls.unlisted ??= new Map()).set(r, call.action);
    else calls.unlisted?.delete(r);
    const kind =
      DIRECTIONS.indexOf(call.direction) * OUTCOMES.length + OUTCOMES.indexOf(call.outcome);
    calls.ring.write(r, WHAT, code * KINDS + kind);
    calls.ring.write(r, SECONDS, call.seconds);
    calls.ring.write(r, AT_MS, atMs);
  }

  /** Newest first. */
  of(chargerId: string): RecentCall[] {
    const calls = this.byCharger.get(chargerId);
    if (!calls) return [];
    const { ring, unlisted } = calls;
    return ring
      .oldestFirst()
      .map((r) => {
        const what = ring.read(r, WHAT) as number;
        // Floored, so UNLISTED (-1) comes back with its kind too.
        const code = Math.floor(what / KINDS);
        const kind = what - code * KINDS;
        return {
          action: (code === UNLISTED ? unlisted?.get(r) : this.names[code]) ?? '',
          direction: DIRECTIONS[Math.floor(kind / OUTCOMES.length)] as OcppDirection,
          outcome: OUTCOMES[kind % OUTCOMES.length] as OcppOutcome,
          seconds: ring.read(r, SECONDS) as number,
          at: new Date(ring.read(r, AT_MS) as number).toISOString(),
        };
      })
      .reverse();
  }

  /** The action's number in the shared table, numbered on first sight while there is room. */
  private code(name: string): number {
    const known = this.codes.get(name);
    if (known !== undefined) return known;
    if (this.names.length >= NAMES_KEPT) return UNLISTED;
    this.codes.set(name, this.names.length);
    this.names.push(name);
    return this.names.length - 1;
  }
}
