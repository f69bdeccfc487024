import { measureAll } from '../shared/meter-reading.js';
import type { MeterReading, SimMeasurand } from '../shared/meter-reading.js';
import type { MeterValue, ReadingContext, SampledValue } from './ocpp-types.js';

/** A 1.6 MeterValue: values as strings, unit beside them. */
export function meterValue(
  reading: MeterReading,
  measurands: readonly SimMeasurand[],
  context: ReadingContext,
  timestamp: Date,
): MeterValue {
  const sampledValue = measureAll(measurands, reading).map(
    ([measurand, { text, unit, location }]): SampledValue =>
      location === undefined
        ? { value: text, context, measurand, unit }
        : { value: text, context, measurand, location, unit },
  );
  return { timestamp: timestamp.toISOString(), sampledValue };
}
