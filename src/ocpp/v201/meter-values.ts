import {
  ENERGY_REGISTER,
  latestOf,
  readSamples,
  type MeterReading,
  type Sample,
} from '../metering/meter-reading.js';

/**
 * OCPP 2.0.1 sampled values: the value is a JSON number, the unit and a power-of-ten multiplier
 * come in unitOfMeasure (defaults Wh / W and 0), and measurand defaults to the energy register.
 */
export interface SampledValue201 {
  value: number;
  context?: string;
  measurand?: string;
  phase?: string;
  location?: string;
  signedMeterValue?: unknown;
  unitOfMeasure?: { unit?: string; multiplier?: number };
}

export interface MeterValue201 {
  timestamp: string;
  sampledValue: SampledValue201[];
}

function toSample(v: SampledValue201): Sample {
  const multiplier = v.unitOfMeasure?.multiplier ?? 0;
  const value = v.value * 10 ** multiplier;
  return {
    measurand: v.measurand ?? ENERGY_REGISTER,
    value: Number.isFinite(value) ? value : null,
    unit: v.unitOfMeasure?.unit,
    phase: v.phase,
    location: v.location,
    context: v.context,
    signed: false,
  };
}

export function readMeterValue201(meterValue: MeterValue201): MeterReading {
  return readSamples(meterValue.timestamp, meterValue.sampledValue.map(toSample));
}

export function latestReading201(meterValues: MeterValue201[]): MeterReading | null {
  return latestOf(meterValues.map(readMeterValue201));
}

/** The register the charger reported in a sample of the given context (Transaction.Begin/End). */
export function registerAt(meterValues: MeterValue201[], context: string): number | null {
  for (const mv of meterValues) {
    const inContext = mv.sampledValue.filter((v) => v.context === context);
    if (inContext.length === 0) continue;
    const r = readMeterValue201({ timestamp: mv.timestamp, sampledValue: inContext });
    if (r.energyWh !== null) return r.energyWh;
  }
  return null;
}
