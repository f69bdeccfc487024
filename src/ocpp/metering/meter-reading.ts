/**
 * The version-neutral reading of one meter sample. Adapters turn their protocol's sampled values
 * into `Sample`s (numbers already parsed, unit and multiplier applied or named), and this module
 * decides what the register, the power and the SoC were, the same way for every protocol.
 */
export interface MeterReading {
  timestamp: string;
  energyWh: number | null;
  /** Energy.Active.Import.Interval: energy since the previous sample, in Wh (not a register). */
  intervalWh?: number;
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

export const ENERGY_REGISTER = 'Energy.Active.Import.Register';
export const ENERGY_INTERVAL = 'Energy.Active.Import.Interval';
const POWER = 'Power.Active.Import';
const SOC = 'SoC';

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

export function readSamples(timestamp: string, samples: Sample[]): MeterReading {
  const of = (m: string) => {
    const all = samples.filter((s) => s.measurand === m);
    const current = all.filter((s) => s.context !== BEGIN);
    return current.length > 0 ? current : all;
  };
  const register = atBestLocation(of(ENERGY_REGISTER));
  const energy = total(register.samples, 'Wh');
  const intervals = atBestLocation(of(ENERGY_INTERVAL));
  const interval = total(intervals.samples, 'Wh');
  const energyAt = energy !== null ? register.at : interval !== null ? intervals.at : undefined;
  // SoC is the vehicle's (location EV, usually): wherever it was measured.
  const soc = of(SOC)
    .map((s) => s.value)
    .find((n): n is number => n !== null && n >= 0 && n <= 100);
  return {
    timestamp,
    energyWh: energy === null ? null : Math.round(energy),
    ...(interval !== null && { intervalWh: interval }),
    powerW: total(atBestLocation(of(POWER)).samples, 'W'),
    socPercent: soc ?? null,
    ...(energyAt !== undefined && energyAt !== 'Outlet' && { energyLocation: energyAt }),
  };
}

/**
 * The last reading of a list that has each quantity (a message may hold several samples); interval
 * energy is the sum of the list's intervals.
 */
export function latestOf(readings: MeterReading[]): MeterReading | null {
  return readings.reduce<MeterReading | null>((latest, r) => {
    const energyFrom = r.energyWh !== null || r.intervalWh !== undefined ? r : latest;
    return {
      timestamp: r.timestamp,
      energyWh: r.energyWh ?? latest?.energyWh ?? null,
      ...((r.intervalWh ?? latest?.intervalWh) !== undefined && {
        intervalWh: (r.intervalWh ?? 0) + (latest?.intervalWh ?? 0),
      }),
      powerW: r.powerW ?? latest?.powerW ?? null,
      socPercent: r.socPercent ?? latest?.socPercent ?? null,
      ...(energyFrom?.energyLocation !== undefined && {
        energyLocation: energyFrom.energyLocation,
      }),
    };
  }, null);
}
