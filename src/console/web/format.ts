// Figures as the site reads them: NGN with thousands separators, times in the site's time zone.

import { localMidnight, wallClockMs } from '../../shared/time-zone.js';

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

/** Midnight at the site of a day picked in a date input (YYYY-MM-DD), as an ISO instant. */
export function siteDayStart(day: string): string {
  const [y, m, d] = day.split('-').map(Number);
  return new Date(localMidnight(y ?? 1970, (m ?? 1) - 1, d ?? 1, zone)).toISOString();
}

/** The site's calendar day (YYYY-MM-DD) of an instant, for a date input. */
export function siteDay(iso: string): string {
  return new Date(wallClockMs(Date.parse(iso), zone)).toISOString().slice(0, 10);
}

/** How a session started, as its pages say it: app, or the card or vehicle with its masked token. */
export function startedBy(s: { origin: 'app' | 'card' | 'vehicle'; token: string | null }): string {
  return s.origin === 'app' ? 'app' : `${s.origin} ${s.token ?? ''}`.trim();
}
