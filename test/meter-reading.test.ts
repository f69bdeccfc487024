import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ENERGY_INTERVAL,
  ENERGY_REGISTER,
  readSamples,
  type MeterReading,
  type Sample,
} from '../src/ocpp/metering/meter-reading.js';

/**
 * readSamples (src/ocpp/metering/meter-reading.ts) reads every meter sample of every charger, so
 * it was rewritten in fewer passes and arrays (issue 30); the version before, kept below as the
 * oracle, must read every list of sampled values the same way.
 */
/** Units in any case (`kwh`, `KWH`): the edge counts the deviation, the meaning is the same. */
function scale(unit: string | undefined, base: 'Wh' | 'W'): number | null {
  const folded = unit?.trim().toLowerCase();
  const b = base.toLowerCase();
  if (folded === undefined || folded === b) return 1;
  if (folded === `k${b}`) return 1000;
  if (folded === `m${b}`) return 1_000_000;
  return null;
}

/** One quantity at one location: the total if given, else the sum of the three lines. */
function total(samples: Sample[], base: 'Wh' | 'W'): number | null {
  const converted = samples
    .map((s) => {
      const factor = scale(s.unit, base);
      return s.value === null || factor === null
        ? null
        : { phase: s.phase, value: s.value * factor };
    })
    .filter((v): v is { phase: string | undefined; value: number } => v !== null);
  const whole = converted.find((v) => v.phase === undefined);
  if (whole) return whole.value;
  // Per line to neutral or per line: one set, never both (that would count each line twice).
  for (const set of [PHASES, PHASES_TO_NEUTRAL]) {
    const lines = converted.filter((v) => v.phase !== undefined && set.includes(v.phase));
    if (lines.length > 0) return lines.reduce((sum, v) => sum + v.value, 0);
  }
  return null;
}

const PHASES = ['L1', 'L2', 'L3'];
const PHASES_TO_NEUTRAL = ['L1-N', 'L2-N', 'L3-N'];

/**
 * A periodic sample may carry the transaction's start register beside the current one (context
 * Transaction.Begin, sent again in every sample by some chargers): the current one counts.
 */
const BEGIN = 'Transaction.Begin';

/**
 * Where energy and power are read, best first. What the driver is sold leaves the Outlet; a
 * charger may also report its grid side (Inlet: the charger's own consumption included) or other
 * points, in any order. Without an Outlet value the one nearest the vehicle is read (Inlet last),
 * rather than none: a charger that meters only there is still stopped at the paid energy.
 */
const LOCATIONS = ['Outlet', 'Cable', 'EV', 'Body', 'Inlet'];

/**
 * The values of one location: the best one the charger sent the quantity at, whether or not that
 * value is readable (an unreadable Outlet value is a missing reading, not a reason to read the
 * Inlet, a different register).
 */
function atBestLocation(samples: Sample[]): { at: string | undefined; samples: Sample[] } {
  const located = samples.filter((s) => !s.signed);
  const at = LOCATIONS.find((l) => located.some((s) => (s.location ?? 'Outlet') === l));
  return { at, samples: located.filter((s) => (s.location ?? 'Outlet') === at) };
}

const POWER = 'Power.Active.Import';
const SOC = 'SoC';

function oracleReadSamples(timestamp: string, samples: Sample[]): MeterReading {
  const of = (m: string) => {
    const all = samples.filter((s) => s.measurand === m);
    const current = all.filter((s) => s.context !== BEGIN);
    return current.length > 0 ? current : all;
  };
  // The same reading as before the rewrite, written compactly: only its helpers above matter.
  const [register, intervals] = [ENERGY_REGISTER, ENERGY_INTERVAL].map((m) =>
    atBestLocation(of(m)),
  );
  const [energy, interval] = [register, intervals].map((r) => (r ? total(r.samples, 'Wh') : null));
  const at = energy != null ? register?.at : interval != null ? intervals?.at : undefined;
  const soc = of(SOC).find((s) => s.value !== null && s.value >= 0 && s.value <= 100)?.value;
  const reading: MeterReading = {
    timestamp,
    energyWh: energy == null ? null : Math.round(energy),
    powerW: total(atBestLocation(of(POWER)).samples, 'W'),
    socPercent: soc ?? null,
  };
  // Its contexts are periodic ones (the generator's): one series.
  if (interval != null) reading.intervals = { periodic: interval };
  if (at !== undefined && at !== 'Outlet') reading.energyLocation = at;
  return reading;
}

/** Few choices per field, so that lists often mix lines, totals, units and locations. */
const sample: fc.Arbitrary<Sample> = fc.record({
  measurand: fc.constantFrom(ENERGY_REGISTER, ENERGY_INTERVAL, POWER, SOC),
  value: fc.oneof(
    { arbitrary: fc.constantFrom(0, -0, 1, 7.5, 101, -3), weight: 3 },
    { arbitrary: fc.double({ min: -1e7, max: 1e7, noNaN: true }), weight: 3 },
    { arbitrary: fc.constant(null), weight: 1 },
  ),
  unit: fc.constantFrom(undefined, 'Wh', 'kWh', 'kwh ', 'MWh', 'W', ' KW', 'mw', 'V'),
  phase: fc.constantFrom(undefined, 'L1', 'L2', 'L3', 'L1-N', 'L2-N', 'N'),
  location: fc.constantFrom(undefined, 'Outlet', 'Inlet', 'EV', 'Elsewhere'),
  context: fc.constantFrom(undefined, 'Sample.Periodic', 'Transaction.Begin'),
  signed: fc.boolean(),
});

describe('readSamples', () => {
  it('reads every list of sampled values as the version before it did', () => {
    fc.assert(
      fc.property(fc.array(sample, { maxLength: 10 }), (samples) => {
        const at = '2026-01-01T00:00:00.000Z';
        const expected: MeterReading = oracleReadSamples(at, samples);
        expect(readSamples(at, samples)).toEqual(expected);
      }),
      { numRuns: 5000 },
    );
  });

  it('keeps interval energy of each timing apart: periodic, clock-aligned and triggered are never added', () => {
    const interval = (value: number, context: string | undefined): Sample => ({
      measurand: ENERGY_INTERVAL,
      value,
      unit: 'Wh',
      phase: undefined,
      location: undefined,
      context,
      signed: false,
    });
    const reading = readSamples('2026-01-01T00:00:00.000Z', [
      interval(100, 'Sample.Periodic'),
      interval(400, 'Sample.Clock'),
      interval(30, 'Trigger'),
    ]);
    expect(reading.intervals).toEqual({ periodic: 100, clock: 400, trigger: 30 });
    expect(readSamples('t', [interval(5, undefined)]).intervals).toEqual({ periodic: 5 });
  });
});
