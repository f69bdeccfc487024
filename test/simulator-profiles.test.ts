import { describe, expect, it } from 'vitest';
import {
  ChargingProfiles,
  type OutletProfileView,
  type ProfileRequest,
} from '../simulators/shared/charging-profile.js';

/**
 * The simulators' composite of installed profiles, from inside: which profile binds, how the
 * schedule kinds run on the charger's clock, and what a stop's zero profile does to a ceiling.
 */

const TIME_FACTOR = 1;
const NOW = performance.now();
const running = (startedSecondsAgo: number, socPercent = 50): OutletProfileView => ({
  id: 1,
  transactionId: 42,
  transactionStartMs: NOW - startedSecondsAgo * 1000,
  socPercent,
});
const watts = (
  id: number,
  purpose: string,
  stackLevel: number,
  periods: [number, number][],
  extra: Partial<ProfileRequest> = {},
): ProfileRequest => ({
  id,
  purpose,
  stackLevel,
  kind: 'Relative',
  schedule: {
    chargingRateUnit: 'W',
    chargingSchedulePeriod: periods.map(([startPeriod, limit]) => ({ startPeriod, limit })),
  },
  ...extra,
});

describe('the simulated charger composite of charging profiles', () => {
  it('the stop zero profile (stack 1) beats the load manager ceiling (stack 0)', () => {
    const profiles = new ChargingProfiles(TIME_FACTOR);
    profiles.install(watts(80_001, 'TxProfile', 0, [[0, 11_000]], { transactionId: 42 }), 1, 'tx');
    expect(profiles.limitOn(running(10), NOW).limitW).toBe(11_000);
    profiles.install(watts(90_001, 'TxProfile', 1, [[0, 0]], { transactionId: 42 }), 1, 'tx');
    expect(profiles.limitOn(running(10), NOW).limitW).toBe(0);
    // A later ceiling replaces only its own kind.
    profiles.install(watts(80_001, 'TxProfile', 0, [[0, 22_000]], { transactionId: 42 }), 1, 'tx');
    expect(profiles.limitOn(running(10), NOW).limitW).toBe(0);
    profiles.dropTransactionProfiles(1);
    expect(profiles.limitOn(running(10), NOW).limitW).toBeUndefined();
  });

  it('min of the charger max and the Tx profile, else the default; other transactions ignored', () => {
    const profiles = new ChargingProfiles(TIME_FACTOR);
    profiles.install(watts(1, 'TxDefaultProfile', 0, [[0, 30_000]]), 0, 'txDefault');
    expect(profiles.limitOn(running(5), NOW).limitW).toBe(30_000);
    profiles.install(watts(2, 'TxDefaultProfile', 0, [[0, 20_000]]), 1, 'txDefault');
    // Same stack level: the connector's own default beats the charger-wide one.
    expect(profiles.limitOn(running(5), NOW).limitW).toBe(20_000);
    profiles.install(watts(3, 'TxProfile', 0, [[0, 40_000]], { transactionId: 7 }), 1, 'tx');
    expect(profiles.limitOn(running(5), NOW).limitW).toBe(20_000);
    profiles.install(watts(4, 'TxProfile', 0, [[0, 40_000]], { transactionId: 42 }), 1, 'tx');
    expect(profiles.limitOn(running(5), NOW).limitW).toBe(40_000);
    profiles.install(watts(5, 'ChargePointMaxProfile', 0, [[0, 25_000]]), 0, 'max');
    expect(profiles.limitOn(running(5), NOW).limitW).toBe(25_000);
    expect(profiles.clear({ purpose: 'ChargePointMaxProfile' })).toBe(1);
    expect(profiles.clear({ id: 5 })).toBe(0);
  });

  it('a Relative schedule counts from the transaction, ends at its duration', () => {
    const profiles = new ChargingProfiles(TIME_FACTOR);
    const schedule = watts(1, 'TxDefaultProfile', 0, [
      [0, 10_000],
      [600, 20_000],
    ]);
    profiles.install(
      { ...schedule, schedule: { ...schedule.schedule, duration: 900 } },
      1,
      'txDefault',
    );
    expect(profiles.limitOn(running(100), NOW)).toEqual({ limitW: 10_000, nextChange: 500 });
    expect(profiles.limitOn(running(700), NOW)).toEqual({ limitW: 20_000, nextChange: 200 });
    expect(profiles.limitOn(running(1_000), NOW).limitW).toBeUndefined();
  });

  it('a daily Recurring schedule repeats; A with phases is AC, without them the DC link', () => {
    const profiles = new ChargingProfiles(TIME_FACTOR);
    const midnight = new Date();
    midnight.setUTCHours(0, 0, 0, 0);
    const secondsToday = (Date.now() - midnight.getTime()) / 1000;
    // 16 A on 3 phases from the current hour's start (yesterday's too), 6 A per phase otherwise.
    const hourStart = Math.floor(secondsToday / 3600) * 3600;
    profiles.install(
      {
        id: 1,
        purpose: 'TxDefaultProfile',
        stackLevel: 0,
        kind: 'Recurring',
        recurrencyKind: 'Daily',
        schedule: {
          startSchedule: new Date(midnight.getTime() - 2 * 86_400_000).toISOString(),
          chargingRateUnit: 'A',
          chargingSchedulePeriod: [
            // In the day's first hour the window itself starts the day (two periods at 0 would be
            // one schedule with a duplicate start: the test failed from 00:00 to 01:00 UTC).
            ...(hourStart > 0 ? [{ startPeriod: 0, limit: 6, numberPhases: 3 }] : []),
            { startPeriod: hourStart, limit: 16, numberPhases: 3 },
            { startPeriod: hourStart + 3600, limit: 6, numberPhases: 3 },
          ],
        },
      },
      1,
      'txDefault',
    );
    expect(profiles.limitOn(running(5), performance.now()).limitW).toBe(16 * 230 * 3);
    const composite = profiles.composite(running(5), 86_400, 'W', 50_000);
    expect(composite.map((p) => p.limit)).toEqual([11_040, 4_140, 11_040]);
    // The next day's window starts one day after today's.
    expect((composite[2]?.startPeriod ?? 0) - (composite[1]?.startPeriod ?? 0)).toBeCloseTo(
      86_400 - 3600,
      -1,
    );
    const dc = new ChargingProfiles(TIME_FACTOR);
    dc.install(
      {
        ...watts(2, 'TxDefaultProfile', 0, []),
        schedule: {
          chargingRateUnit: 'A',
          chargingSchedulePeriod: [{ startPeriod: 0, limit: 100 }],
        },
      },
      1,
      'txDefault',
    );
    // 100 A at the pack's 370 V (50 % SoC).
    expect(dc.limitOn(running(5, 50), NOW).limitW).toBe(37_000);
  });
});
