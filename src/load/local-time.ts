/**
 * Wall time in an IANA time zone without a date library: Intl gives the zone's offset at an
 * instant, and a local date-time is placed on the timeline by two passes of that offset (exact
 * except in a DST gap, where the time that does not exist lands on the shifted instant, and in a
 * fold, where the first of the two instants is taken).
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

/** Whether Intl knows the zone (config validation). */
export function isTimeZone(name: string): boolean {
  try {
    formatter(name);
    return true;
  } catch {
    return false;
  }
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

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
    // 1970-01-01 was a Thursday (4)
    weekday: (((day + 4) % 7) + 7) % 7,
    minute: Math.floor((wall - day * DAY_MS) / MINUTE_MS),
  };
}

/** The instant at which the zone's wall clock shows local `day` + `minute` (see the header). */
export function instantOf(day: number, minute: number, timeZone: string): number {
  const wall = day * DAY_MS + minute * MINUTE_MS;
  const first = wall - offsetAt(wall, timeZone);
  return wall - offsetAt(first, timeZone);
}
