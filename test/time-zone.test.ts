import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { localPeriods } from '../src/shared/time-zone.js';

const HOUR = 3_600_000;
const ms = (iso: string) => Date.parse(iso);

describe('today and this month in the site’s time zone', () => {
  it('Lagos (UTC+1): a minute past local midnight is already the new day and month', () => {
    const p = localPeriods(ms('2026-03-31T23:01:00Z'), 'Africa/Lagos');
    expect(p.today).toEqual({ from: '2026-03-31T23:00:00.000Z', to: '2026-04-01T23:00:00.000Z' });
    expect(p.month).toEqual({ from: '2026-03-31T23:00:00.000Z', to: '2026-04-30T23:00:00.000Z' });
    const before = localPeriods(ms('2026-03-31T22:59:00Z'), 'Africa/Lagos');
    expect(before.today.from).toBe('2026-03-30T23:00:00.000Z');
    expect(before.month.from).toBe('2026-02-28T23:00:00.000Z');
  });

  it('a day with a daylight-saving change is 23 hours long, and starts at its own midnight', () => {
    const p = localPeriods(ms('2026-03-29T12:00:00Z'), 'Europe/Berlin');
    expect(p.today).toEqual({ from: '2026-03-28T23:00:00.000Z', to: '2026-03-29T22:00:00.000Z' });
    const next = localPeriods(ms('2026-03-30T12:00:00Z'), 'Europe/Berlin');
    expect(next.today.from).toBe('2026-03-29T22:00:00.000Z');
  });

  it('for any instant and zone: the instant lies in its day and month, a day is 23-25 h', () => {
    const zones = ['Africa/Lagos', 'UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata'];
    fc.assert(
      fc.property(
        fc.integer({ min: ms('2000-01-01T00:00:00Z'), max: ms('2060-01-01T00:00:00Z') }),
        fc.constantFrom(...zones),
        (now, zone) => {
          const p = localPeriods(now, zone);
          const [df, dt, mf, mt] = [p.today.from, p.today.to, p.month.from, p.month.to].map(ms);
          expect(df).toBeLessThanOrEqual(now);
          expect(now).toBeLessThan(dt as number);
          expect([23 * HOUR, 24 * HOUR, 25 * HOUR]).toContain((dt as number) - (df as number));
          expect(mf).toBeLessThanOrEqual(df as number);
          expect(dt).toBeLessThanOrEqual(mt as number);
        },
      ),
    );
  });
});
