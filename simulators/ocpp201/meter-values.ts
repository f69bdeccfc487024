import { measureAll } from '../shared/meter-reading.js';
import type { MeterReading, SimMeasurand } from '../shared/meter-reading.js';
import type { MeterValue, ReadingContext, SampledValue } from './ocpp-types.js';

/** A 2.0.1 MeterValue: numeric values, the unit in unitOfMeasure (always stated, Wh included). */
export function meterValue(
  reading: MeterReading,
  measurands: readonly SimMeasurand[],
  context: ReadingContext,
  timestamp: Date,
): MeterValue {
  const sampledValue = measureAll(measurands, reading).map(
    ([measurand, { value, unit, location }]): SampledValue => {
      const sample: SampledValue = { value, context, measurand, unitOfMeasure: { unit } };
      if (location !== undefined) sample.location = location;
      return sample;
    },
  );
  return { timestamp: timestamp.toISOString(), sampledValue };
}
