/**
 * The version-neutral reading of one meter sample. Adapters turn their protocol's sampled values
 * into `Sample`s (numbers already parsed, unit and multiplier applied or named), and this module
 * decides what the register, the power and the SoC were, the same way for every protocol.
 */
export interface MeterReading {
  timestamp: string;
  energyWh: number | null;
  /**
   * Energy.Active.Import.Interval by timing: energy since the previous sample of the same timing,
   * in Wh (not a register). A charger may report it both in its periodic samples and in its
   * clock-aligned ones over the same time: each timing is a whole account on its own, never to be
   * added to another (interval-energy.ts).
   */
  intervals?: Partial<Record<IntervalTiming, number>>;
  powerW: number | null;
  socPercent: number | null;
  /** Set when the energy was read away from the Outlet: the charger sent no Outlet register. */
  energyLocation?: string;
}

export interface Sample {
  measurand: string;
  /** The reported number; null when the charger sent something unreadable. */
  value: number | null;
  /** As sent; undefined means the measurand's base unit (Wh, W, Percent). */
  unit: string | undefined;
  phase: string | undefined;
  /** Where it was measured; undefined means the Outlet (the default in both versions). */
  location: string | undefined;
  context: string | undefined;
  /** Signed meter data is for the driver's own verification, not for our arithmetic. */
  signed: boolean;
}

/**
 * Which series an interval belongs to, by its `context`: clock-aligned samples (`Sample.Clock`)
 * count since the previous aligned one, triggered and interruption samples since whenever the
 * charger last sent one, everything else (periodic, transaction begin and end, none) since the
 * previous periodic sample.
 */
export type IntervalTiming = 'periodic' | 'clock' | 'trigger';
export const INTERVAL_TIMINGS: readonly IntervalTiming[] = ['periodic', 'clock', 'trigger'];

export function intervalTimingOf(context: string | undefined): IntervalTiming {
  if (context === 'Sample.Clock') return 'clock';
  if (context === 'Trigger' || context?.startsWith('Interruption.')) return 'trigger';
  return 'periodic';
}

export const ENERGY_REGISTER = 'Energy.Active.Import.Register';
export const ENERGY_INTERVAL = 'Energy.Active.Import.Interval';
const POWER = 'Power.Active.Import';
const SOC = 'SoC';

/** Units in any case (`kwh`, `KWH`): the edge counts the deviation, the meaning is the same. */
const SCALES: Record<'Wh' | 'W', ReadonlyMap<string, number>> = {
  Wh: new Map([
    ['wh', 1],
    ['kwh', 1000],
    ['mwh', 1_000_000],
  ]),
  W: new Map([
    ['w', 1],
    ['kw', 1000],
    ['mw', 1_000_000],
  ]),
};

function scale(unit: string | undefined, base: 'Wh' | 'W'): number | null {
  if (unit === undefined || unit === base) return 1;
  return SCALES[base].get(unit.trim().toLowerCase()) ?? null;
}

/**
 * One quantity at one location: the total if given (the first), else the sum of the three lines,
 * in the order sent. One pass without arrays: every meter sample of every charger comes here.
 */
function total(samples: Sample[], base: 'Wh' | 'W'): number | null {
  let lines: number | null = null;
  let toNeutral: number | null = null;
  for (const s of samples) {
    const factor = scale(s.unit, base);
    if (s.value === null || factor === null) continue;
    const value = s.value * factor;
    if (s.phase === undefined) return value;
    if (PHASES.includes(s.phase)) lines = (lines ?? 0) + value;
    else if (PHASES_TO_NEUTRAL.includes(s.phase)) toNeutral = (toNeutral ?? 0) + value;
  }
  // Per line to neutral or per line: one set, never both (that would count each line twice).
  return lines ?? toNeutral;
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
  let best = LOCATIONS.length;
  for (const s of samples) {
    if (s.signed) continue;
    const rank = LOCATIONS.indexOf(s.location ?? 'Outlet');
    if (rank >= 0 && rank < best) best = rank;
  }
  const at = LOCATIONS[best];
  if (at === undefined) return { at, samples: [] };
  return { at, samples: samples.filter((s) => !s.signed && (s.location ?? 'Outlet') === at) };
}

/** Interval energy per timing, each read at its best location; undefined when there is none. */
function intervalsOf(samples: Sample[]): {
  intervals: Partial<Record<IntervalTiming, number>> | undefined;
  at: string | undefined;
} {
  let intervals: Partial<Record<IntervalTiming, number>> | undefined;
  let at: string | undefined;
  for (const timing of INTERVAL_TIMINGS) {
    const series = atBestLocation(samples.filter((s) => intervalTimingOf(s.context) === timing));
    const wh = total(series.samples, 'Wh');
    if (wh === null) continue;
    intervals = { ...intervals, [timing]: wh };
    at ??= series.at;
  }
  return { intervals, at };
}

export function readSamples(timestamp: string, samples: Sample[]): MeterReading {
  const of = (m: string) => {
    const all = samples.filter((s) => s.measurand === m);
    // The start register beside current ones is left out; alone, it is what there is.
    const mixed = all.some((s) => s.context === BEGIN) && all.some((s) => s.context !== BEGIN);
    return mixed ? all.filter((s) => s.context !== BEGIN) : all;
  };
  const register = atBestLocation(of(ENERGY_REGISTER));
  const energy = total(register.samples, 'Wh');
  const { intervals, at: intervalsAt } = intervalsOf(of(ENERGY_INTERVAL));
  const energyAt = energy !== null ? register.at : intervals ? intervalsAt : undefined;
  // SoC is the vehicle's (location EV, usually): wherever it was measured.
  const soc = of(SOC)
    .map((s) => s.value)
    .find((n): n is number => n !== null && n >= 0 && n <= 100);
  return {
    timestamp,
    energyWh: energy === null ? null : Math.round(energy),
    ...(intervals && { intervals }),
    powerW: total(atBestLocation(of(POWER)).samples, 'W'),
    socPercent: soc ?? null,
    ...(energyAt !== undefined && energyAt !== 'Outlet' && { energyLocation: energyAt }),
  };
}

/**
 * The last reading of a list that has each quantity (a message may hold several samples); interval
 * energy is the sum of the list's intervals, timing by timing.
 */
export function latestOf(readings: MeterReading[]): MeterReading | null {
  return readings.reduce<MeterReading | null>((latest, r) => {
    const energyFrom = r.energyWh !== null || r.intervals !== undefined ? r : latest;
    const intervals = sumIntervals(latest?.intervals, r.intervals);
    return {
      timestamp: r.timestamp,
      energyWh: r.energyWh ?? latest?.energyWh ?? null,
      ...(intervals && { intervals }),
      powerW: r.powerW ?? latest?.powerW ?? null,
      socPercent: r.socPercent ?? latest?.socPercent ?? null,
      ...(energyFrom?.energyLocation !== undefined && {
        energyLocation: energyFrom.energyLocation,
      }),
    };
  }, null);
}

function sumIntervals(
  a: Partial<Record<IntervalTiming, number>> | undefined,
  b: Partial<Record<IntervalTiming, number>> | undefined,
): Partial<Record<IntervalTiming, number>> | undefined {
  if (!a || !b) return a ?? b;
  const sum: Partial<Record<IntervalTiming, number>> = { ...a };
  for (const timing of INTERVAL_TIMINGS) {
    const wh = b[timing];
    if (wh !== undefined) sum[timing] = (sum[timing] ?? 0) + wh;
  }
  return sum;
}
