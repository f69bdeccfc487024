import {
  ENERGY_REGISTER,
  latestOf,
  readSamples,
  type MeterReading,
  type Sample,
} from '../metering/meter-reading.js';

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

function parseNumber(value: string): number | null {
  const n = Number(value.trim().replace(',', '.'));
  return value.trim() !== '' && Number.isFinite(n) ? n : null;
}

function toSample(v: SampledValue16): Sample {
  return {
    measurand: v.measurand ?? ENERGY_REGISTER,
    value: parseNumber(v.value),
    unit: v.unit,
    phase: v.phase,
    location: v.location,
    context: v.context,
    signed: v.format === 'SignedData',
  };
}

export function readMeterValue(meterValue: MeterValue16): MeterReading {
  return readSamples(meterValue.timestamp, meterValue.sampledValue.map(toSample));
}

/** The last reading of a MeterValues list that has each quantity (a list may hold several samples). */
export function latestReading(meterValues: MeterValue16[]): MeterReading | null {
  return latestOf(meterValues.map(readMeterValue));
}
