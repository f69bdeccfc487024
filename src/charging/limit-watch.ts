import { clearUnrefTimer } from '../shared/unref-timer.js';

/**
 * Predicts when a session reaches its paid energy and fires `onLimit` in time to stop it there. A
 * reading that shows the paid energy reached is answered to its caller (`begin` and `sample` return
 * true: stop now), so a meter sample reaches the stop in a straight line; `onLimit` is the planned
 * stop's timer.
 *
 * Rates are measured on the charger's own clock (energy delta / timestamp delta), not on when
 * samples arrive nor from its reported power: a burst of samples it queued while offline arrives
 * within a second but spans the time it was measured over, so it is a rate like any other, not a
 * huge one. A clock skew cancels out of a delta; the caller gives each sample's age (how long
 * before now it was measured, from the charger's clock offset: ocpp/charger-state/charger-clocks.ts), and the stop is
 * planned from the moment the sample was taken, so a charger hours off still gets its early stop.
 * A charger clock that does not move (never set, stuck) leaves the rate to our receive clock.
 * The rate spans the last `RATE_WINDOW` sample intervals, so one sample stamped late cannot make
 * the rate look several times higher and stop the session far too early. Each sample re-plans the
 * stop, so the timer follows the rate as it changes (DC taper, AC phase changes), flat ones
 * included: a pause is not a rate. A window with no flow (the EV paused, the register flat) plans
 * no stop until energy flows again; a connector the charger says is suspended holds the plan (no
 * stop fires) until it says it charges or a sample shows energy flowing, whatever the status.
 */
export interface LimitWatchOptions {
  /** Fire this long before the predicted moment, to cover the round trip of the stop command. */
  leadMs: number;
  /** A planned stop is due (its timer fired); a reading that reaches the limit is returned instead. */
  onLimit: (sessionId: string) => void;
  /**
   * The power the session's charger accepted as its ceiling (W), when something outside limits it
   * (the site's load manager); null when nothing does. After it changes, the rate measured before
   * is stale (a lower would stop the session early, a raise late): the prediction uses the
   * ceiling until two readings after the change measure the new rate, then what the meter says
   * flows (a charger may draw a little past its ceiling: AC at a phase voltage above nominal).
   */
  ceilingW?: (sessionId: string) => number | null;
}

/** W to Wh per ms. */
const WH_PER_MS_PER_W = 1 / 3_600_000;

const RATE_WINDOW = 2;

/** How long a stop planned from a late reading waits for the newer readings behind it. */
const REPLAY_SETTLE_MS = 500;

/** After a reconnect, how long a stop due meanwhile waits for the charger's replay. */
const RECONNECT_SETTLE_MS = 2_000;

/** setTimeout's longest wait, 2^31 − 1 ms (24.8 days). */
const LONGEST_WAIT_MS = 2_147_483_647;

/** A reading on the charger's clock: its own timestamp, and how long before now it was taken. */
export interface ChargerStamp {
  stampMs: number;
  ageMs: number;
  /**
   * The charger clock's epoch (ocpp/charger-state/charger-clocks.ts): stamps of two epochs are not comparable
   * (the clock stepped between them). Absent: taken as the epoch of the readings around it.
   */
  epoch?: number | null;
}

interface Point {
  /** Our receive clock. */
  atMs: number;
  /** The charger's clock; null when not known. */
  stampMs: number | null;
  /** The charger clock's epoch, when known (ChargerStamp). */
  epoch?: number | null;
  /** When it was taken, on our clock (its arrival less its age). */
  takenAtMs: number;
  deliveredWh: number;
  /** Replayed from the charger's queue, or taken REPLAY_SETTLE_MS or more before it arrived. */
  late?: boolean;
}

interface Watched {
  limitWh: number;
  /** The latest points, oldest first; at most RATE_WINDOW + 1. */
  points: Point[];
  timer: NodeJS.Timeout | null;
  fired: boolean;
  /** The last measured rate (Wh per ms on the charger's clock), and its age at that sample. */
  rate: { whPerMs: number; ageMs: number } | null;
  /** The ceiling last planned with (W), null when none. */
  ceilingW: number | null;
  /** The rate was measured before the ceiling last changed: plan with the ceiling. */
  stale: boolean;
  /** The only point is the last reading before the change: the next one replaces it. */
  preChange: boolean;
  /** The charger says the EV is suspended: no stop is planned until energy flows again. */
  held: boolean;
  /** The last rate measured with energy flowing (a pause leaves it): how fast it may flow. */
  flowWhPerMs: number | null;
}

/** The charger's clock stepped between the two readings: their stamps say nothing of each other. */
function acrossStep(p: Point, q: Point): boolean {
  return p.epoch !== undefined && q.epoch !== undefined && p.epoch !== q.epoch;
}

function stampedAfter(p: Point, q: Point): boolean {
  return p.stampMs !== null && q.stampMs !== null && !acrossStep(p, q) && p.stampMs > q.stampMs;
}

/**
 * Taken after it: on the charger's clock within one epoch; across a step, when each was taken on
 * ours (each stamp placed by its own epoch's offset).
 */
function takenAfter(p: Point, q: Point): boolean {
  return stampedAfter(p, q) || (acrossStep(p, q) && p.takenAtMs > q.takenAtMs);
}

/** Later on the charger's clock when both have it and it moved, else on ours. */
function after(p: Point, q: Point): boolean {
  return takenAfter(p, q) || p.atMs > q.atMs;
}

function pointOf(atMs: number, stamp: ChargerStamp | undefined, deliveredWh: number): Point {
  return {
    atMs,
    stampMs: stamp?.stampMs ?? null,
    ...(stamp?.epoch !== undefined ? { epoch: stamp.epoch } : {}),
    takenAtMs: atMs - (stamp?.ageMs ?? 0),
    deliveredWh,
  };
}

export class LimitWatch {
  private readonly watched = new Map<string, Watched>();

  constructor(private readonly opts: LimitWatchOptions) {}

  begin(
    sessionId: string,
    limitWh: number,
    deliveredWh: number,
    atMs: number,
    stampMs: number | null = null,
    epoch?: number | null,
  ): boolean {
    this.end(sessionId);
    this.watched.set(sessionId, {
      limitWh,
      points: [
        pointOf(atMs, stampMs === null ? undefined : { stampMs, ageMs: 0, epoch }, deliveredWh),
      ],
      timer: null,
      fired: false,
      rate: null,
      ceilingW: this.opts.ceilingW?.(sessionId) ?? null,
      stale: false,
      preChange: false,
      held: false,
      flowWhPerMs: null,
    });
    return deliveredWh >= limitWh && this.reached(sessionId);
  }

  /**
   * A reading received at `atMs`. With the charger's `stamp`, the rate is measured on its clock
   * whenever that clock moved over the window; across a step (readings of two clock epochs) on
   * when each was taken on ours; a clock that stands still or runs backwards within an epoch (never
   * set, stuck) leaves the rate to our receive clock. A reading the charger queued (`live` false)
   * arrived late, so its arrival says nothing of when it was taken: it is a rate point only when
   * the charger's clock (across a step, its offset) places it after the last one; otherwise it is
   * history, which stops the session at once if it shows the paid energy delivered.
   */
  sample(
    sessionId: string,
    deliveredWh: number,
    atMs: number,
    stamp?: ChargerStamp,
    live = true,
  ): boolean {
    const w = this.watched.get(sessionId);
    if (!w || w.fired) return false;
    if (deliveredWh >= w.limitWh) {
      // Kept as the last reading: a stop the charger could not hear is planned again from it.
      w.points = [...w.points.slice(-RATE_WINDOW), pointOf(atMs, stamp, deliveredWh)];
      return this.reached(sessionId);
    }
    const point: Point = {
      ...pointOf(atMs, stamp, deliveredWh),
      ...(!live || (stamp?.ageMs ?? 0) >= REPLAY_SETTLE_MS ? { late: true } : {}),
    };
    const last = w.points[w.points.length - 1];
    if (!live && !(last && takenAfter(point, last))) {
      // The first stamped reading after points without a stamp (picked up after a restart):
      // the anchor the charger's clock measures the next ones from.
      if (last?.stampMs === null && point.stampMs !== null && deliveredWh >= last.deliveredWh)
        w.points = [point];
      return false;
    }
    if (last && (!after(point, last) || deliveredWh < last.deliveredWh)) return false; // out of order
    if (last && deliveredWh > last.deliveredWh) w.held = false; // energy flows, whatever it says
    w.points.push(point);
    if (w.points.length > RATE_WINDOW + 1 || w.preChange) w.points.shift();
    w.preChange = false;
    const first = w.points[0] as Point;
    const onStamps = stampedAfter(point, first);
    // Across a clock step, the times each was taken on ours: on arrival times, a queue replayed in
    // a burst before a live reading on the stepped clock was a rate of megawatts, stopping the
    // session at 60 % of its paid energy (meter simulation, a 2.0.1 step back while offline).
    const onTaken = !onStamps && acrossStep(point, first) && point.takenAtMs > first.takenAtMs;
    const dt = onStamps
      ? (point.stampMs as number) - (first.stampMs as number)
      : onTaken
        ? point.takenAtMs - first.takenAtMs
        : atMs - first.atMs;
    const ageMs = onStamps || onTaken ? (stamp?.ageMs ?? 0) : 0;
    const de = deliveredWh - first.deliveredWh;
    if (dt <= 0) return false;
    if (de <= 0) {
      // No flow over the window (paused): the rate before the pause would stop the session early.
      // Nothing is planned until a sample shows flow again, or the ceiling changed (planned at it).
      w.rate = null;
      if (w.stale) this.plan(sessionId, w, 0);
      else this.unplan(w);
      return false;
    }
    w.rate = { whPerMs: de / dt, ageMs };
    w.flowWhPerMs = w.rate.whPerMs;
    w.stale = false; // two readings since the change: the rate under the current ceiling
    this.plan(sessionId, w, 0);
    return false;
  }

  /**
   * The session's allowed power changed: the stop is planned again from the last reading at the
   * new ceiling, the time since that reading arrived on. That time is capped at the interval
   * between the last two readings: a reading is due by then, and a clock that stepped forward in
   * between must not stop the session early.
   */
  ceilingChanged(sessionId: string, nowMs: number): void {
    const w = this.watched.get(sessionId);
    const last = w?.points[w.points.length - 1];
    if (!w || w.fired || !last) return;
    const ceilingW = this.opts.ceilingW?.(sessionId) ?? null;
    if (ceilingW === w.ceilingW) return;
    w.ceilingW = ceilingW;
    w.stale = ceilingW !== null;
    const previous = w.points.length > 1 ? (w.points[w.points.length - 2] as Point) : null;
    const intervalMs = previous ? last.atMs - previous.atMs : Infinity;
    // Readings from before the change no longer measure the rate: the next one starts the window.
    w.points = [last];
    w.preChange = true;
    this.plan(sessionId, w, Math.min(Math.max(0, nowMs - last.atMs), intervalMs));
  }

  /**
   * The rate the session drew before this process watched it (after a restart, its average over
   * what it was billed so far): the last flow rate until one is measured here.
   */
  flowBefore(sessionId: string, whPerMs: number): void {
    const w = this.watched.get(sessionId);
    if (w && w.flowWhPerMs === null && Number.isFinite(whPerMs) && whPerMs > 0)
      w.flowWhPerMs = whPerMs;
  }

  /**
   * The last rate energy was measured flowing at (Wh per ms), a pause since included; null before
   * any flow was measured.
   */
  rateWhPerMs(sessionId: string): number | null {
    return this.watched.get(sessionId)?.flowWhPerMs ?? null;
  }

  /** The charger says the session's EV is suspended: the planned stop waits (see the class). */
  hold(sessionId: string): void {
    const w = this.watched.get(sessionId);
    if (!w || w.fired) return;
    w.held = true;
    this.unplan(w);
  }

  /** The charger says the session charges again: the stop is planned from the last reading. */
  resume(sessionId: string): void {
    const w = this.watched.get(sessionId);
    if (!w || w.fired || !w.held) return;
    w.held = false;
    this.plan(sessionId, w, 0);
  }

  /**
   * The stop came due while the charger could not hear it (offline): what it delivered meanwhile
   * is known only from the readings it will replay, so the watch waits for them instead.
   */
  rearm(sessionId: string): void {
    const w = this.watched.get(sessionId);
    if (!w) return;
    w.fired = false;
    this.unplan(w);
  }

  /**
   * The charger is back: the stop is planned again from the last reading, the time since it on,
   * but no sooner than RECONNECT_SETTLE_MS: the readings it queued arrive first and re-plan it
   * (an EV that tapered while the link was down is not stopped on the rate from before). A last
   * reading already at the paid energy stops it at once.
   */
  reconnected(sessionId: string, nowMs: number): void {
    const w = this.watched.get(sessionId);
    const last = w?.points[w.points.length - 1];
    if (!w || w.fired || !last) return;
    if (last.deliveredWh >= w.limitWh) {
      this.fire(sessionId);
      return;
    }
    this.plan(sessionId, w, Math.max(0, nowMs - last.atMs), RECONNECT_SETTLE_MS);
  }

  private unplan(w: Watched): void {
    clearUnrefTimer(w.timer);
    w.timer = null;
  }

  private plan(sessionId: string, w: Watched, sinceMs: number, atLeastMs = 0): void {
    const last = w.points[w.points.length - 1];
    if (!last || w.held) {
      this.unplan(w);
      return;
    }
    const ceilingW = w.stale ? w.ceilingW : null;
    const whPerMs = ceilingW !== null ? ceilingW * WH_PER_MS_PER_W : (w.rate?.whPerMs ?? 0);
    clearUnrefTimer(w.timer);
    w.timer = null;
    if (whPerMs <= 0) return; // allowed nothing (waiting for capacity): no flow to plan from
    const etaMs = (w.limitWh - last.deliveredWh) / whPerMs;
    const ageMs = w.stale ? 0 : (w.rate?.ageMs ?? 0);
    // A late reading (replayed, or a short outage's queue that looks live) comes in a burst, the
    // newer readings milliseconds behind: its age projected at the rate before the outage (an EV
    // that paused or tapered since) stopped sessions well short of their paid energy. The stop it
    // plans waits for them, briefly.
    const floorMs = Math.max(atLeastMs, last.late ? REPLAY_SETTLE_MS : 0);
    const waitMs = Math.max(floorMs, etaMs - ageMs - sinceMs - this.opts.leadMs);
    // A slow flow far from its limit (an EV drawing 50 W with 50 kWh paid and left: 1,000 h) is
    // due later than setTimeout can wait, and past that Node fires after 1 ms: wait the longest
    // it can, then plan again from the same reading, that much later.
    w.timer =
      waitMs > LONGEST_WAIT_MS
        ? setTimeout(() => {
            if (this.watched.get(sessionId) === w)
              this.plan(sessionId, w, sinceMs + LONGEST_WAIT_MS);
          }, LONGEST_WAIT_MS)
        : setTimeout(() => this.fire(sessionId), waitMs);
    w.timer.unref();
  }

  /** Whether the session's stop is watched (a session without a start register may not be yet). */
  watching(sessionId: string): boolean {
    return this.watched.has(sessionId);
  }

  end(sessionId: string): void {
    const w = this.watched.get(sessionId);
    clearUnrefTimer(w?.timer);
    this.watched.delete(sessionId);
  }

  endAll(): void {
    for (const id of [...this.watched.keys()]) this.end(id);
  }

  private fire(sessionId: string): void {
    if (this.reached(sessionId)) this.opts.onLimit(sessionId);
  }

  /** Marks the session's limit reached, once: true the first time. */
  private reached(sessionId: string): boolean {
    const w = this.watched.get(sessionId);
    if (!w || w.fired) return false;
    w.fired = true;
    clearUnrefTimer(w.timer);
    w.timer = null;
    return true;
  }
}
