// Figures as the site reads them: NGN with thousands separators, times in the site's time zone.

let zone = 'Africa/Lagos';

export function setSiteTimeZone(tz: string | undefined): void {
  if (!tz) return;
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: tz });
    zone = tz;
  } catch {
    // An unknown zone name: keep the default rather than show nothing.
  }
}

export function siteTimeZone(): string {
  return zone;
}

const naira = new Intl.NumberFormat('en-NG', {
  style: 'currency',
  currency: 'NGN',
  maximumFractionDigits: 0,
});
const number = new Intl.NumberFormat('en-NG', { maximumFractionDigits: 1 });

export const ngn = (n: number): string => naira.format(n);
/** A tariff, which may have kobo (412.5 NGN/kWh). */
export const price = (n: number): string =>
  new Intl.NumberFormat('en-NG', {
    style: 'currency',
    currency: 'NGN',
    maximumFractionDigits: 2,
  }).format(n);
export const kwh = (wh: number | null): string =>
  wh === null ? '–' : `${number.format(wh / 1000)} kWh`;
export const kw = (w: number | null): string =>
  w === null ? '–' : `${number.format(w / 1000)} kW`;
export const pct = (p: number | null): string => (p === null ? '–' : `${Math.round(p)} %`);

export function time(iso: string | null): string {
  if (!iso) return '–';
  return new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    day: '2-digit',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  }).format(new Date(iso));
}

/** The wall-clock time at `ms` in the site's zone, read as if it were UTC (for offsets). */
function zonedAsUtc(ms: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const n = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
}

/** Midnight at the site of a day picked in a date input (YYYY-MM-DD), as an ISO instant. */
export function siteDayStart(day: string): string {
  const asUtc = Date.parse(`${day}T00:00:00Z`);
  // The offset at UTC midnight is not the one at the site's midnight on a day the clocks change
  // (Pacific/Auckland on a DST end day): correct the first guess with the offset in force at it.
  const guess = asUtc - (zonedAsUtc(asUtc) - asUtc);
  return new Date(asUtc - (zonedAsUtc(guess) - guess)).toISOString();
}

/** The site's calendar day (YYYY-MM-DD) of an instant, for a date input. */
export function siteDay(iso: string): string {
  return new Date(zonedAsUtc(Date.parse(iso))).toISOString().slice(0, 10);
}
