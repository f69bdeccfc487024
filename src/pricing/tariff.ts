import {
  instantsOf,
  localTime,
  transitionsNear,
  WEEKDAYS,
  type Weekday,
} from '../load/local-time.js';
import { minuteOfDay } from '../power/schedule.js';
import { microNgnPerWh } from './money.js';

/** A time-of-day price: from `from` on each of `days` until `to` (the next day when earlier). */
export interface TariffWindowSpec {
  days: readonly Weekday[];
  /** Local wall time HH:MM in the site's time zone. */
  from: string;
  to: string;
  pricePerKwh: number;
}

/** A tariff as the config file and the operator API give it. */
export interface TariffSpec {
  /** The price outside every window. */
  pricePerKwh: number;
  windows: readonly TariffWindowSpec[];
}

export interface PriceInForce {
  microNgnPerWh: number;
  /** The window that sets it (e.g. "mon,tue 18:00-22:00"); null: the tariff's base price. */
  window: string | null;
  /** When this price next changes; null: never (a flat tariff). */
  untilMs: number | null;
}

const DAY_MINUTES = 1440;
const WEEK_MINUTES = 7 * DAY_MINUTES;

export const windowLabel = (w: TariffWindowSpec): string => `${w.days.join(',')} ${w.from}-${w.to}`;

/**
 * A tariff evaluated in one time zone. Windows follow the power schedule's rule (power/schedule.ts):
 * `to` earlier than `from` ends the next day, equal to it lasts a whole day. Windows of a tariff
 * may not overlap, so every minute of the week has exactly one price: the table below holds it.
 */
export class Tariff {
  /** Per minute of the local week (0 = Sunday 00:00): the window index in force, -1 none. */
  private readonly byMinute = new Int16Array(WEEK_MINUTES).fill(-1);
  private readonly prices: number[];
  private readonly labels: string[];

  constructor(
    readonly spec: TariffSpec,
    private readonly timeZone: string,
  ) {
    this.prices = spec.windows.map((w) => microNgnPerWh(w.pricePerKwh));
    this.labels = spec.windows.map(windowLabel);
    spec.windows.forEach((w, i) => {
      const from = minuteOfDay(w.from);
      const to = minuteOfDay(w.to);
      const length = to > from ? to - from : to - from + DAY_MINUTES;
      for (const day of new Set(w.days)) {
        const start = WEEKDAYS.indexOf(day) * DAY_MINUTES + from;
        for (let m = start; m < start + length; m++) {
          const at = m % WEEK_MINUTES;
          const taken = this.byMinute[at] ?? -1;
          if (taken !== -1) {
            throw new RangeError(
              `window ${this.labels[i]} overlaps window ${this.labels[taken]}: each minute has one price`,
            );
          }
          this.byMinute[at] = i;
        }
      }
    });
    // Checked last: a price error names the tariff's base price, not a window.
    microNgnPerWh(spec.pricePerKwh);
  }

  private windowAt(ms: number): number {
    const t = localTime(ms, this.timeZone);
    return this.byMinute[t.weekday * DAY_MINUTES + t.minute] ?? -1;
  }

  private priceOf(window: number): number {
    return window === -1 ? microNgnPerWh(this.spec.pricePerKwh) : (this.prices[window] as number);
  }

  /** The price at `ms`, the window that sets it and until when it holds. */
  at(ms: number): PriceInForce {
    const window = this.windowAt(ms);
    const price = this.priceOf(window);
    return {
      microNgnPerWh: price,
      window: window === -1 ? null : (this.labels[window] as string),
      untilMs: this.nextChange(ms, price),
    };
  }

  /**
   * The first window edge (or wall-clock jump) after `ms` at which the price differs. Prices only
   * change there, so the candidates over the coming week are all that need looking at.
   */
  private nextChange(ms: number, price: number): number | null {
    if (this.spec.windows.length === 0) return null;
    const today = localTime(ms, this.timeZone).day;
    const candidates: number[] = [];
    for (let day = today - 1; day <= today + 8; day++) {
      const weekday = WEEKDAYS[(((day + 4) % 7) + 7) % 7] as Weekday;
      candidates.push(...transitionsNear(day, this.timeZone));
      for (const w of this.spec.windows) {
        if (!w.days.includes(weekday)) continue;
        const from = minuteOfDay(w.from);
        const to = minuteOfDay(w.to);
        const end = to > from ? to : to + DAY_MINUTES;
        for (const minute of [from, end]) {
          const d = day + Math.floor(minute / DAY_MINUTES);
          candidates.push(...instantsOf(d, minute % DAY_MINUTES, this.timeZone));
        }
      }
    }
    candidates.sort((a, b) => a - b);
    for (const at of candidates) {
      if (at > ms && this.priceOf(this.windowAt(at)) !== price) return at;
    }
    return null;
  }
}
