import {
  DAY_MINUTES,
  instantsOf,
  localTime,
  transitionsNear,
  weekdayOf,
  windowMinutes,
  WEEKDAYS,
  type Weekday,
} from '../shared/local-time.js';

/** A window of the power schedule, as the config gives it (site.power.schedule). */
export interface ScheduleWindowSpec {
  /** The node it limits; the site when absent. */
  node?: string | undefined;
  /** The days on which the window starts (a window over midnight ends on the next day). */
  days: readonly Weekday[];
  /** Local wall time, HH:MM, in the site's time zone. */
  from: string;
  to: string;
  limitKw: number;
}

interface Window {
  node: string;
  days: ReadonlySet<number>;
  from: number;
  /** Length in minutes: to − from, plus a day when the window runs over midnight. */
  length: number;
  watts: number;
}

/** kW from the config or an API to whole watts, rounded down (a limit never grows by rounding). */
export function kwToWatts(kw: number): number {
  return Math.floor(Math.round(kw * 1_000_000) / 1000);
}

/**
 * The schedule's windows evaluated in one time zone. A window is in force from `from` on each of
 * its days until `to`: the same day when `to` is later, the next day when it is earlier (18:00 →
 * 06:00), a whole day when they are equal. Edges fall on whole local minutes, so the next one is
 * found among the windows' own edges over the coming week, never by polling.
 */
export class PowerSchedule {
  private readonly windows: Window[];
  private cached: { from: number; edge: number } | null = null;

  constructor(
    specs: readonly ScheduleWindowSpec[],
    private readonly timeZone: string,
    siteNodeId: string,
  ) {
    this.windows = specs.map((s) => ({
      node: s.node ?? siteNodeId,
      days: new Set(s.days.map((d) => WEEKDAYS.indexOf(d))),
      ...windowMinutes(s.from, s.to),
      watts: kwToWatts(s.limitKw),
    }));
  }

  get empty(): boolean {
    return this.windows.length === 0;
  }

  /** The lowest limit in force per node at `ms` (nodes without a window in force are absent). */
  inForce(ms: number): Map<string, number> {
    const now = localTime(ms, this.timeZone);
    const out = new Map<string, number>();
    for (const w of this.windows) {
      if (!this.covers(w, now.weekday, now.minute)) continue;
      const seen = out.get(w.node);
      if (seen === undefined || w.watts < seen) out.set(w.node, w.watts);
    }
    return out;
  }

  /** The lowest limit any window gives `node`, or undefined when none limits it. */
  lowest(node: string): number | undefined {
    let low: number | undefined;
    for (const w of this.windows)
      if (w.node === node && (low === undefined || w.watts < low)) low = w.watts;
    return low;
  }

  /** The first window edge after `ms`, or undefined without windows. */
  nextEdge(ms: number): number | undefined {
    if (this.windows.length === 0) return undefined;
    // No edge lies between the moment the cached one was found and it.
    const c = this.cached;
    if (c && ms >= c.from && ms < c.edge) return c.edge;
    const edge = this.findNextEdge(ms);
    this.cached = edge === undefined ? null : { from: ms, edge };
    return edge;
  }

  private findNextEdge(ms: number): number | undefined {
    const today = localTime(ms, this.timeZone).day;
    let next: number | undefined;
    // A window that started yesterday may end today; the latest start to look at is a week on.
    const consider = (at: number) => {
      if (at > ms && (next === undefined || at < next)) next = at;
    };
    for (let day = today - 1; day <= today + 7; day++) {
      const weekday = weekdayOf(day);
      // The wall clock jumping (DST) can start or end a window between its edges.
      for (const at of transitionsNear(day, this.timeZone)) consider(at);
      for (const w of this.windows) {
        if (!w.days.has(weekday)) continue;
        for (const minute of [w.from, w.from + w.length]) {
          for (const at of instantsOf(day, minute, this.timeZone)) consider(at);
        }
      }
    }
    return next;
  }

  private covers(w: Window, weekday: number, minute: number): boolean {
    if (w.days.has(weekday) && minute >= w.from && minute < w.from + w.length) return true;
    // The part after midnight of a window that started the day before.
    const yesterday = (weekday + 6) % 7;
    return w.days.has(yesterday) && minute + DAY_MINUTES < w.from + w.length;
  }
}
