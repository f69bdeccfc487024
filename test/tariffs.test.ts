import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/read-config.js';
import type { GatewayConfigInput } from '../src/config/schema.js';
import { WEEKDAYS, type Weekday } from '../src/shared/local-time.js';
import { quoteFullCharge } from '../src/pricing/quote.js';
import { Tariff, type TariffSpec, type TariffWindowSpec } from '../src/pricing/tariff.js';
import { testConfig } from './helpers/gateway.js';

const ms = (iso: string) => Date.parse(iso);
const LAGOS = 'Africa/Lagos';

/** Grid at 300 NGN/kWh; weekday evenings on the generator at 450; the weekend nights cheap. */
const SITE: TariffSpec = {
  pricePerKwh: 300,
  windows: [
    { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '18:00', to: '22:00', pricePerKwh: 450 },
    { days: ['sat', 'sun'], from: '22:00', to: '06:00', pricePerKwh: 200.5 },
  ],
};

describe('a tariff’s price at an instant, in the site’s time zone', () => {
  const t = new Tariff(SITE, LAGOS);

  it('a quote at 17:59 (Lagos) uses the price now and says it holds until 18:00', () => {
    // 2026-11-27 is a Friday; 16:59 UTC is 17:59 in Lagos (UTC+1).
    const before = t.at(ms('2026-11-27T16:59:00Z'));
    expect(before).toEqual({
      microNgnPerWh: 300_000,
      window: null,
      untilMs: ms('2026-11-27T17:00:00Z'),
    });
    const vehicle = { model: 'EV', batteryWh: 60_000 };
    const quote = (microNgnPerWh: number) =>
      quoteFullCharge({ vehicle, socPercent: 50, microNgnPerWh, efficiencyPercent: 100 }).amount;
    expect(quote(before.microNgnPerWh)).toBe(9_000);
    // A Start one minute later, inside the window, fixes the window's price for the session.
    const atStart = t.at(ms('2026-11-27T17:00:00Z'));
    expect(atStart).toEqual({
      microNgnPerWh: 450_000,
      window: 'mon,tue,wed,thu,fri 18:00-22:00',
      untilMs: ms('2026-11-27T21:00:00Z'),
    });
    expect(quote(atStart.microNgnPerWh)).toBe(13_500);
  });

  it('a window over midnight starting Sunday ends Monday 06:00; the Saturday one runs into Sunday', () => {
    expect(t.at(ms('2026-11-29T04:00:00Z')).window).toBe('sat,sun 22:00-06:00'); // Sun 05:00
    expect(t.at(ms('2026-11-30T04:59:00Z'))).toMatchObject({
      microNgnPerWh: 200_500,
      untilMs: ms('2026-11-30T05:00:00Z'),
    }); // Mon 05:59
    expect(t.at(ms('2026-11-30T05:00:00Z'))).toMatchObject({
      microNgnPerWh: 300_000,
      window: null,
    });
    // Saturday 22:00: the night price holds until Sunday 06:00.
    expect(t.at(ms('2026-11-28T21:00:00Z')).untilMs).toBe(ms('2026-11-29T05:00:00Z'));
  });

  it('a flat tariff never changes; overlapping windows are refused', () => {
    expect(new Tariff({ pricePerKwh: 412.5, windows: [] }, LAGOS).at(0)).toEqual({
      microNgnPerWh: 412_500,
      window: null,
      untilMs: null,
    });
    expect(
      () =>
        new Tariff(
          {
            pricePerKwh: 1,
            windows: [
              { days: ['sun'], from: '20:00', to: '02:00', pricePerKwh: 2 },
              { days: ['mon'], from: '01:00', to: '03:00', pricePerKwh: 3 },
            ],
          },
          LAGOS,
        ),
    ).toThrow(/overlaps/);
  });

  it('the wall clock’s spring-forward hour has no minute: the window ends at the jump', () => {
    // Berlin 2026-03-29: 02:00 local is 03:00; a 01:00-02:30 window ends at the jump (01:00 UTC).
    const berlin = new Tariff(
      {
        pricePerKwh: 100,
        windows: [{ days: ['sun'], from: '01:00', to: '02:30', pricePerKwh: 50 }],
      },
      'Europe/Berlin',
    );
    expect(berlin.at(ms('2026-03-29T00:30:00Z'))).toMatchObject({
      microNgnPerWh: 50_000,
      untilMs: ms('2026-03-29T01:00:00Z'),
    });
  });
});

describe('tariffs in the config file', () => {
  it('windows are read in the site’s zone; overlapping ones stop the start, naming the key', () => {
    const config = (windows: NonNullable<GatewayConfigInput['tariffs'][string]['windows']>) =>
      parseConfig(
        testConfig('/tmp/x', {
          tariffs: { dc: { pricePerKwh: 412.5, windows }, ac: { pricePerKwh: 250 } },
        }),
        '/tmp/x',
      );
    const evening = { days: ['sat' as const], from: '18:00', to: '22:00', pricePerKwh: 450 };
    expect(config([evening]).tariffs.dc?.windows).toEqual([evening]);
    expect(() =>
      config([
        { days: ['mon'], from: '18:00', to: '22:00', pricePerKwh: 450 },
        { days: ['mon'], from: '21:00', to: '23:00', pricePerKwh: 500 },
      ]),
    ).toThrow(
      /^config key tariffs\.dc\.windows: window mon 21:00-23:00 overlaps window mon 18:00-22:00/,
    );
    expect(() => config([{ days: ['mon'], from: '6pm', to: '22:00', pricePerKwh: 450 }])).toThrow(
      /tariffs\.dc\.windows\.0\.from/,
    );
  });
});

const ZONES = [LAGOS, 'UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata'];
const minute = fc.integer({ min: 0, max: 1439 });
const hhmm = (m: number) =>
  `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
const windowArb: fc.Arbitrary<TariffWindowSpec> = fc.record({
  days: fc.uniqueArray(fc.constantFrom(...WEEKDAYS), { minLength: 1, maxLength: 7 }),
  from: minute.map(hhmm),
  to: minute.map(hhmm),
  // Often the base price or another window's: an edge between equal prices is no change.
  pricePerKwh: fc.oneof(
    fc.constantFrom(300, 450),
    fc.integer({ min: 1, max: 2_000_000 }).map((n) => n / 1000),
  ),
});
const DAY = 86_400_000;
/** Any instant, or one within days of a daylight-saving change (Europe, then the US). */
const instant = fc.oneof(
  fc.integer({ min: ms('2020-01-01T00:00:00Z'), max: ms('2040-01-01T00:00:00Z') }),
  fc
    .tuple(
      fc.constantFrom(
        ms('2026-03-29T01:00:00Z'),
        ms('2026-10-25T01:00:00Z'),
        ms('2026-03-08T07:00:00Z'),
        ms('2026-11-01T06:00:00Z'),
      ),
      fc.integer({ min: -3 * DAY, max: 3 * DAY }),
    )
    .map(([at, d]) => at + d),
);

/** Independent of the class: the windows covering local minute `m` of the week (Sunday 00:00 = 0). */
function covering(windows: readonly TariffWindowSpec[], m: number): number[] {
  const toMin = (s: string) => Number(s.slice(0, 2)) * 60 + Number(s.slice(3));
  return windows.flatMap((w, i) => {
    const from = toMin(w.from);
    const to = toMin(w.to);
    const length = to > from ? to - from : to - from + 1440;
    const hit = w.days.some((d: Weekday) => {
      const start = WEEKDAYS.indexOf(d) * 1440 + from;
      return (m - start + 10080) % 10080 < length;
    });
    return hit ? [i] : [];
  });
}

function localWeekMinute(at: number, zone: string): number {
  const p = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    weekday: 'short',
    hour: 'numeric',
    minute: 'numeric',
  }).formatToParts(new Date(at));
  const get = (type: string) => p.find((x) => x.type === type)?.value ?? '';
  const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(get('weekday'));
  return day * 1440 + Number(get('hour')) * 60 + Number(get('minute'));
}

describe('for all tariffs and instants', () => {
  it('a tariff is accepted exactly when no minute of the week is in two windows', () => {
    fc.assert(
      fc.property(fc.array(windowArb, { maxLength: 4 }), (windows) => {
        const clash = Array.from({ length: 10080 }, (_, m) => covering(windows, m).length).some(
          (n) => n > 1,
        );
        const make = () => new Tariff({ pricePerKwh: 300, windows }, LAGOS);
        if (clash) expect(make).toThrow(/overlaps/);
        else expect(make).not.toThrow();
      }),
      { numRuns: 100 },
    );
  });

  it('every instant has exactly one price: its window’s, else the base; it holds until untilMs', () => {
    const accepted = fc.array(windowArb, { maxLength: 4 }).filter((windows) => {
      try {
        new Tariff({ pricePerKwh: 300, windows }, LAGOS);
        return true;
      } catch {
        return false;
      }
    });
    fc.assert(
      fc.property(accepted, fc.constantFrom(...ZONES), instant, (windows, zone, at) => {
        const tariff = new Tariff({ pricePerKwh: 300, windows }, zone);
        const price = tariff.at(at);
        const [only, ...more] = covering(windows, localWeekMinute(at, zone));
        expect(more).toEqual([]);
        const expected = only === undefined ? 300 : (windows[only] as TariffWindowSpec).pricePerKwh;
        expect(price.microNgnPerWh).toBe(Math.round(expected * 1000));
        if (price.untilMs === null) {
          // No change within the coming week means none ever (the pattern repeats weekly).
          for (let m = 1; m <= 7 * 24; m++)
            expect(tariff.at(at + m * 3_600_000).microNgnPerWh).toBe(price.microNgnPerWh);
        } else {
          expect(price.untilMs).toBeGreaterThan(at);
          expect(tariff.at(price.untilMs).microNgnPerWh).not.toBe(price.microNgnPerWh);
          // Never an earlier change: every minute up to it has the same price.
          for (let t = at; t < price.untilMs; t += 60_000 * 17)
            expect(tariff.at(t).microNgnPerWh).toBe(price.microNgnPerWh);
          expect(tariff.at(price.untilMs - 1).microNgnPerWh).toBe(price.microNgnPerWh);
        }
      }),
      { numRuns: 100 },
    );
  });
});
