import { MEASURANDS } from './ocpp-types.js';
import type { Measurand, MeterValue, ReadingContext, SampledValue } from './ocpp-types.js';

/** Measurands this simulated meter can report (others are refused by ChangeConfiguration). */
export const SUPPORTED_MEASURANDS: readonly Measurand[] = [
  'Energy.Active.Import.Register',
  'Power.Active.Import',
  'Power.Offered',
  'SoC',
  'Current.Import',
  'Voltage',
];

export interface MeterReading {
  registerWh: number;
  powerW: number;
  offeredW: number;
  /** Absent when no vehicle reports its state of charge. */
  socPercent?: number;
}

// A 400 V-class pack: DC link voltage rises with SoC, which is what makes Current.Import drop
// slightly over a constant-power session on real chargers.
function packVoltage(socPercent: number | undefined): number {
  return 330 + 0.8 * (socPercent ?? 50);
}

/** SoC as vehicles report it over ISO 15118 / CHAdeMO: whole percent, never rounded up. */
export function reportedSoc(socPercent: number): number {
  return Math.floor(socPercent);
}

function sampleOf(
  measurand: Measurand,
  reading: MeterReading,
  context: ReadingContext,
): SampledValue | undefined {
  switch (measurand) {
    case 'Energy.Active.Import.Register':
      return { value: String(reading.registerWh), context, measurand, unit: 'Wh' };
    case 'Power.Active.Import':
      return { value: String(Math.round(reading.powerW)), context, measurand, unit: 'W' };
    case 'Power.Offered':
      return { value: String(Math.round(reading.offeredW)), context, measurand, unit: 'W' };
    case 'SoC':
      if (reading.socPercent === undefined) return undefined;
      return {
        value: String(reportedSoc(reading.socPercent)),
        context,
        measurand,
        location: 'EV',
        unit: 'Percent',
      };
    case 'Current.Import': {
      const amps = reading.powerW / packVoltage(reading.socPercent);
      return { value: amps.toFixed(1), context, measurand, unit: 'A' };
    }
    case 'Voltage':
      return { value: packVoltage(reading.socPercent).toFixed(1), context, measurand, unit: 'V' };
    default:
      return undefined;
  }
}

export function meterValue(
  reading: MeterReading,
  measurands: readonly Measurand[],
  context: ReadingContext,
  timestamp: Date,
): MeterValue {
  const sampledValue = measurands
    .map((measurand) => sampleOf(measurand, reading, context))
    .filter((sample): sample is SampledValue => sample !== undefined);
  // The schema allows an empty list, but central systems expect at least the register.
  if (sampledValue.length === 0) {
    const register = sampleOf('Energy.Active.Import.Register', reading, context);
    if (register) sampledValue.push(register);
  }
  return { timestamp: timestamp.toISOString(), sampledValue };
}

function isMeasurand(name: string): name is Measurand {
  return (MEASURANDS as readonly string[]).includes(name);
}

/** Parses a MeterValuesSampledData-style comma list; undefined if any entry is unsupported. */
export function parseMeasurandList(csv: string): Measurand[] | undefined {
  const names = csv
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  const measurands: Measurand[] = [];
  for (const name of names) {
    if (!isMeasurand(name) || !SUPPORTED_MEASURANDS.includes(name)) return undefined;
    measurands.push(name);
  }
  return measurands;
}
