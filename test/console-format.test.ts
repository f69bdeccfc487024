import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ngn,
  price,
  setSiteTimeZone,
  siteDay,
  siteDayStart,
  siteTimeZone,
  time,
} from '../src/console/web/format.js';

// The browser console's figures: NGN as the site reads it, and days and times in the site's zone
// whatever zone the browser itself is in.

afterEach(() => setSiteTimeZone('Africa/Lagos'));

describe('console figures', () => {
  it('shows money as whole NGN with thousands separators, a tariff with its kobo', () => {
    expect(ngn(1_234_567)).toBe('₦1,234,567');
    expect(ngn(-5_000)).toBe('-₦5,000');
    expect(price(412.5)).toBe('₦412.50');
  });

  it("shows times in the site's zone, and keeps the default for an unknown zone name", () => {
    expect(time('2026-11-24T23:30:00Z')).toBe('25 Nov, 00:30:00');
    setSiteTimeZone('Not/AZone');
    expect(siteTimeZone()).toBe('Africa/Lagos');
    setSiteTimeZone('Asia/Kolkata');
    expect(time('2026-11-24T23:30:00Z')).toBe('25 Nov, 05:00:00');
  });

  it("a picked day starts at the site's midnight", () => {
    expect(siteDayStart('2026-11-24')).toBe('2026-11-23T23:00:00.000Z');
    setSiteTimeZone('America/New_York');
    expect(siteDayStart('2026-07-04')).toBe('2026-07-04T04:00:00.000Z');
    // A DST end day: midnight is still at +13, the day's noon already at +12.
    setSiteTimeZone('Pacific/Auckland');
    expect(siteDayStart('2031-04-06')).toBe('2031-04-05T11:00:00.000Z');
  });

  it('for every zone and day, the day of its start is that day', () => {
    const zones = ['Africa/Lagos', 'UTC', 'Asia/Kolkata', 'America/New_York', 'Pacific/Auckland'];
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }),
        (zone, date) => {
          setSiteTimeZone(zone);
          const day = date.toISOString().slice(0, 10);
          expect(siteDay(siteDayStart(day))).toBe(day);
          expect(siteDay(new Date(Date.parse(siteDayStart(day)) - 1).toISOString())).not.toBe(day);
        },
      ),
    );
  });
});
