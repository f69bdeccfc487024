/**
 * A charger takes this long to follow a new profile: IEC 61851-1 gives the EV 5 s to follow a
 * lower pilot duty cycle, and a DC charger ramps within the same order.
 */
export const RAMP_MS = 5_000;

/**
 * What a charger is given to start obeying a lower profile before the site counts it at what it
 * measures: its meter's next reading after this already shows the lower power on chargers that
 * apply a profile at once; one still above is counted at its reading (DrawReadings), not judged.
 */
export const OBEY_MS = 1_000;

/** Changes kept per session: a reading older than the oldest of them is not judged. */
const KEPT = 16;

/** What a session's charger was allowed from `fromMs` on; null when not known (a reconnect). */
interface Step {
  fromMs: number;
  watts: number | null;
}

/** The allowances that may have held when a reading was measured, W. */
export interface AllowanceBand {
  /** The lowest and highest in force during the ramp time before it. */
  low: number;
  high: number;
  /** The one in force at that moment. */
  at: number;
}

/**
 * What each session's charger accepted over time, on the gateway's clock, so that a power reading
 * is judged against the allowance that held when it was measured: a charger back from an outage
 * replays readings taken under the profile before the one it has just accepted.
 */
export class AllowanceHistory {
  private readonly steps = new Map<string, Step[]>();

  set(sessionId: string, watts: number | null, atMs: number): void {
    const steps = this.steps.get(sessionId) ?? [];
    steps.push({ fromMs: atMs, watts });
    steps.sort((a, b) => a.fromMs - b.fromMs);
    if (steps.length > KEPT) steps.shift();
    this.steps.set(sessionId, steps);
  }

  /**
   * The band a reading measured at `atMs` is judged against: every allowance in force from
   * `windowMs` (the ramp time) before it to it. Null when one of them is not known, or the window
   * starts before the first one kept (a first profile is still being ramped to from the default).
   */
  band(sessionId: string, atMs: number, windowMs = RAMP_MS): AllowanceBand | null {
    const steps = this.steps.get(sessionId) ?? [];
    const from = atMs - windowMs;
    let start = -1;
    steps.forEach((s, i) => {
      if (s.fromMs <= from) start = i;
    });
    if (start < 0) return null;
    const watts = steps
      .slice(start)
      .filter((s, i) => i === 0 || s.fromMs <= atMs)
      .map((s) => s.watts);
    if (!watts.every((w): w is number => w !== null)) return null;
    return { low: Math.min(...watts), high: Math.max(...watts), at: watts.at(-1) as number };
  }

  /** Drops the sessions `keep` does not name. */
  retain(keep: (sessionId: string) => boolean): void {
    for (const id of [...this.steps.keys()]) if (!keep(id)) this.steps.delete(id);
  }
}
