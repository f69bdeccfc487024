/**
 * The wall-clock date and time in `timeZone` at instant `ms`, as if it were UTC (ms). Pure (Intl
 * only): the browser console uses it too.
 */
export function wallClockMs(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
}

/**
 * The instant the wall clock of `timeZone` shows the given local date at 00:00. The zone's
 * offset is taken at a first guess and again at the result, so a day that starts right after
 * a daylight-saving change still lands on its own midnight.
 */
export function localMidnight(
  year: number,
  monthIndex: number,
  day: number,
  timeZone: string,
): number {
  const wall = Date.UTC(year, monthIndex, day);
  let guess = wall;
  for (let i = 0; i < 2; i += 1) guess = wall - (wallClockMs(guess, timeZone) - guess);
  return guess;
}

/** Today and this month in the site's zone, as [from, to) instants (ISO strings, UTC). */
export function localPeriods(
  nowMs: number,
  timeZone: string,
): { today: { from: string; to: string }; month: { from: string; to: string } } {
  const wall = new Date(wallClockMs(nowMs, timeZone));
  const y = wall.getUTCFullYear();
  const m = wall.getUTCMonth();
  const d = wall.getUTCDate();
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    today: {
      from: iso(localMidnight(y, m, d, timeZone)),
      to: iso(localMidnight(y, m, d + 1, timeZone)),
    },
    month: {
      from: iso(localMidnight(y, m, 1, timeZone)),
      to: iso(localMidnight(y, m + 1, 1, timeZone)),
    },
  };
}
