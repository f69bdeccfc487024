/**
 * Reads OCPP 1.6 sampled values the way real chargers send them: values are strings (sometimes
 * with spaces or a comma), energy in Wh or kWh (no unit means Wh, as the spec says), power in W or
 * kW, per-phase values without a total, and measurand omitted for the energy register.
 */
export interface SampledValue16 {
  value: string;
  context?: string;
  format?: string;
  measurand?: string;
  phase?: string;
  location?: string;
  unit?: string;
}

export interface MeterValue16 {
  timestamp: string;
  sampledValue: SampledValue16[];
}

export interface MeterReading {
  timestamp: string;
  energyWh: number | null;
  powerW: number | null;
  socPercent: number | null;
}

const ENERGY = 'Energy.Active.Import.Register';
const POWER = 'Power.Active.Import';
const SOC = 'SoC';

function parseNumber(value: string): number | null {
  const n = Number(value.trim().replace(',', '.'));
  return Number.isFinite(n) ? n : null;
}

function scale(unit: string | undefined, base: 'Wh' | 'W'): number | null {
  if (unit === undefined || unit === base) return 1;
  if (unit === `k${base}`) return 1000;
  return null;
}

function total(values: SampledValue16[], base: 'Wh' | 'W'): number | null {
  const converted = values
    .filter((v) => v.format !== 'SignedData')
    .map((v) => {
      const n = parseNumber(v.value);
      const factor = scale(v.unit, base);
      return n === null || factor === null ? null : { phase: v.phase, value: n * factor };
    })
    .filter((v): v is { phase: string | undefined; value: number } => v !== null);
  const whole = converted.find((v) => v.phase === undefined);
  if (whole) return whole.value;
  const lines = converted.filter((v) => v.phase === 'L1' || v.phase === 'L2' || v.phase === 'L3');
  return lines.length > 0 ? lines.reduce((sum, v) => sum + v.value, 0) : null;
}

export function readMeterValue(meterValue: MeterValue16): MeterReading {
  const byMeasurand = (m: string) =>
    meterValue.sampledValue.filter((v) => (v.measurand ?? ENERGY) === m);
  const energy = total(byMeasurand(ENERGY), 'Wh');
  const power = total(byMeasurand(POWER), 'W');
  const socValue = byMeasurand(SOC)
    .map((v) => parseNumber(v.value))
    .find((n): n is number => n !== null && n >= 0 && n <= 100);
  return {
    timestamp: meterValue.timestamp,
    energyWh: energy === null ? null : Math.round(energy),
    powerW: power,
    socPercent: socValue ?? null,
  };
}

/** The last reading of a MeterValues list that has each quantity (a list may hold several samples). */
export function latestReading(meterValues: MeterValue16[]): MeterReading | null {
  return meterValues.reduce<MeterReading | null>((latest, mv) => {
    const r = readMeterValue(mv);
    return {
      timestamp: r.timestamp,
      energyWh: r.energyWh ?? latest?.energyWh ?? null,
      powerW: r.powerW ?? latest?.powerW ?? null,
      socPercent: r.socPercent ?? latest?.socPercent ?? null,
    };
  }, null);
}
