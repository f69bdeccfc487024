/**
 * Wall time in an IANA time zone without a date library: Intl gives the zone's offset at an
 * instant. A local date-time is on the timeline once, twice (the repeated hour when clocks go
 * back) or never (the skipped hour when they go forward): instantsOf gives every occurrence, and
 * transitionsNear the moments the offset changes, so a caller looking for the next change of
 * something read on the wall clock can take both.
 */
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface LocalTime {
  /** Days since 1970-01-01 of the local date (a plain day count, no zone). */
  day: number;
  /** 0 = Sunday … 6 = Saturday */
  weekday: number;
  /** Minutes since local midnight. */
  minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
export const DAY_MINUTES = 1440;

/** Minutes since local midnight of a wall time written HH:MM. */
export function minuteOfDay(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
}

/**
 * A daily window from `from` to `to` (HH:MM) as its start and length in minutes, the one rule
 * the power schedule and tariffs share: `to` earlier than `from` ends the next day (18:00 →
 * 06:00), equal to it lasts a whole day.
 */
export function windowMinutes(from: string, to: string): { from: number; length: number } {
  const start = minuteOfDay(from);
  const end = minuteOfDay(to);
  return { from: start, length: end > start ? end - start : end - start + DAY_MINUTES };
}

/** 0 = Sunday … 6 = Saturday of a day count since 1970-01-01 (a Thursday). */
export function weekdayOf(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

/** The zone's local wall clock at `ms` read as if it were UTC, ms (seconds kept, ms dropped). */
function wallAsUtc(ms: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return Date.UTC(
    parts.year ?? 1970,
    (parts.month ?? 1) - 1,
    parts.day ?? 1,
    parts.hour ?? 0,
    parts.minute ?? 0,
    parts.second ?? 0,
  );
}

/** The zone's offset from UTC at `ms`, ms (Lagos: +3 600 000). */
export function offsetAt(ms: number, timeZone: string): number {
  const whole = Math.floor(ms / 1000) * 1000;
  return wallAsUtc(whole, timeZone) - whole;
}

export function localTime(ms: number, timeZone: string): LocalTime {
  const wall = ms + offsetAt(ms, timeZone);
  const day = Math.floor(wall / DAY_MS);
  return {
    day,
    weekday: weekdayOf(day),
    minute: Math.floor((wall - day * DAY_MS) / MINUTE_MS),
  };
}

/** Offsets never change twice within this span around a local day (real zones: months apart). */
const SPAN_MS = 14 * 3_600_000;

/** Every instant at which the zone's wall clock shows local `day` + `minute`, earliest first. */
export function instantsOf(day: number, minute: number, timeZone: string): number[] {
  const wall = day * DAY_MS + minute * MINUTE_MS;
  const offsets = new Set([
    offsetAt(wall - SPAN_MS, timeZone),
    offsetAt(wall, timeZone),
    offsetAt(wall + SPAN_MS, timeZone),
  ]);
  const out: number[] = [];
  for (const o of offsets) {
    const t = wall - o;
    if (offsetAt(t, timeZone) === o && !out.includes(t)) out.push(t);
  }
  return out.sort((a, b) => a - b);
}

/** The first instant at or after which the wall clock shows local `day` + `minute` or later. */
export function instantOf(day: number, minute: number, timeZone: string): number {
  const exact = instantsOf(day, minute, timeZone)[0];
  if (exact !== undefined) return exact;
  // A skipped time: the clock jumps over it at the transition.
  const wall = day * DAY_MS + minute * MINUTE_MS;
  return transitionsNear(day, timeZone).find((t) => t >= wall - SPAN_MS) ?? wall;
}

/** The instants (whole minutes) around local `day` at which the zone's offset changes. */
export function transitionsNear(day: number, timeZone: string): number[] {
  let lo = day * DAY_MS - SPAN_MS;
  let hi = (day + 1) * DAY_MS + SPAN_MS;
  const after = offsetAt(hi, timeZone);
  if (offsetAt(lo, timeZone) === after) return [];
  // offset(lo) differs from offset(hi): find the first minute with the later offset
  lo = Math.floor(lo / MINUTE_MS);
  hi = Math.ceil(hi / MINUTE_MS);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(mid * MINUTE_MS, timeZone) === after) hi = mid;
    else lo = mid;
  }
  return [hi * MINUTE_MS];
}
