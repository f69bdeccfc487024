/**
 * Predicts when a session reaches its paid energy and fires `onLimit` in time to stop it there.
 *
 * Rates are measured on the gateway's own receive clock (energy delta / arrival delta), not from the
 * charger's timestamps or its reported power: that keeps the prediction right for chargers with a
 * skewed clock and for simulators running faster than real time. The rate spans the last
 * `RATE_WINDOW` sample intervals, so one sample that arrives late (network or event-loop jitter)
 * cannot make the rate look several times higher and stop the session far too early. Each sample
 * re-plans the stop, so the timer follows the rate as it changes (DC taper, AC phase changes).
 */
export interface LimitWatchOptions {
  /** Fire this long before the predicted moment, to cover the round trip of the stop command. */
  leadMs: number;
  onLimit: (sessionId: string) => void;
}

const RATE_WINDOW = 2;

interface Point {
  atMs: number;
  deliveredWh: number;
}

interface Watched {
  limitWh: number;
  /** The latest points, oldest first; at most RATE_WINDOW + 1. */
  points: Point[];
  timer: NodeJS.Timeout | null;
  fired: boolean;
}

export class LimitWatch {
  private readonly watched = new Map<string, Watched>();

  constructor(private readonly opts: LimitWatchOptions) {}

  begin(sessionId: string, limitWh: number, deliveredWh: number, atMs: number): void {
    this.end(sessionId);
    this.watched.set(sessionId, {
      limitWh,
      points: [{ atMs, deliveredWh }],
      timer: null,
      fired: false,
    });
    if (deliveredWh >= limitWh) this.fire(sessionId);
  }

  sample(sessionId: string, deliveredWh: number, atMs: number): void {
    const w = this.watched.get(sessionId);
    if (!w || w.fired) return;
    if (deliveredWh >= w.limitWh) {
      this.fire(sessionId);
      return;
    }
    const last = w.points[w.points.length - 1];
    if (last && (atMs <= last.atMs || deliveredWh < last.deliveredWh)) return; // out of order
    w.points.push({ atMs, deliveredWh });
    if (w.points.length > RATE_WINDOW + 1) w.points.shift();
    const first = w.points[0] as Point;
    const dt = atMs - first.atMs;
    const de = deliveredWh - first.deliveredWh;
    if (dt <= 0 || de <= 0) return; // no flow measured (paused, suspended): wait for the next sample
    const etaMs = ((w.limitWh - deliveredWh) * dt) / de;
    if (w.timer) clearTimeout(w.timer);
    w.timer = setTimeout(() => this.fire(sessionId), Math.max(0, etaMs - this.opts.leadMs));
    w.timer.unref();
  }

  /**
   * A sample that describes the past (queued offline): it cannot give a rate, but if it shows the
   * paid energy already delivered, the stop cannot wait.
   */
  history(sessionId: string, deliveredWh: number): void {
    const w = this.watched.get(sessionId);
    if (w && deliveredWh >= w.limitWh) this.fire(sessionId);
  }

  end(sessionId: string): void {
    const w = this.watched.get(sessionId);
    if (w?.timer) clearTimeout(w.timer);
    this.watched.delete(sessionId);
  }

  endAll(): void {
    for (const id of [...this.watched.keys()]) this.end(id);
  }

  private fire(sessionId: string): void {
    const w = this.watched.get(sessionId);
    if (!w || w.fired) return;
    w.fired = true;
    if (w.timer) clearTimeout(w.timer);
    w.timer = null;
    this.opts.onLimit(sessionId);
  }
}
