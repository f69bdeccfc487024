// What the simulated DC meter measures, independent of how a protocol version encodes it
// (1.6 sends values as strings with a `unit`, 2.0.1 as numbers with `unitOfMeasure`).

/** Measurands this meter can report; both protocol versions spell them the same way. */
export const SUPPORTED_MEASURANDS = [
  'Energy.Active.Import.Register',
  'Power.Active.Import',
  'Power.Offered',
  'SoC',
  'Current.Import',
  'Voltage',
] as const;
export type SimMeasurand = (typeof SUPPORTED_MEASURANDS)[number];

export interface MeterReading {
  registerWh: number;
  powerW: number;
  offeredW: number;
  /** Absent when no vehicle reports its state of charge. */
  socPercent?: number;
}

export interface Measurement {
  /** The value as the meter displays it (fixed decimals). */
  text: string;
  value: number;
  unit: 'Wh' | 'W' | 'Percent' | 'A' | 'V';
  /** Where it is measured, when that is not the charger's own meter. */
  location?: 'EV';
}

// A 400 V-class pack: DC link voltage rises with SoC, which is what makes Current.Import drop
// slightly over a constant-power session on real chargers.
export function packVoltage(socPercent: number | undefined): number {
  return 330 + 0.8 * (socPercent ?? 50);
}

/** SoC as vehicles report it over ISO 15118 / CHAdeMO: whole percent, never rounded up. */
export function reportedSoc(socPercent: number): number {
  return Math.floor(socPercent);
}

function measurement(text: string, unit: Measurement['unit']): Measurement {
  return { text, value: Number(text), unit };
}

/** One measurand of a reading; undefined when the meter cannot tell (SoC without a vehicle). */
export function measure(measurand: SimMeasurand, reading: MeterReading): Measurement | undefined {
  switch (measurand) {
    case 'Energy.Active.Import.Register':
      return measurement(String(reading.registerWh), 'Wh');
    case 'Power.Active.Import':
      return measurement(String(Math.round(reading.powerW)), 'W');
    case 'Power.Offered':
      return measurement(String(Math.round(reading.offeredW)), 'W');
    case 'SoC':
      if (reading.socPercent === undefined) return undefined;
      return { ...measurement(String(reportedSoc(reading.socPercent)), 'Percent'), location: 'EV' };
    case 'Current.Import':
      return measurement((reading.powerW / packVoltage(reading.socPercent)).toFixed(1), 'A');
    case 'Voltage':
      return measurement(packVoltage(reading.socPercent).toFixed(1), 'V');
  }
}

/**
 * The measurands to sample, in order, each with its measurement. Central systems expect at least
 * the register, so it stands in when nothing else can be measured.
 */
export function measureAll(
  measurands: readonly SimMeasurand[],
  reading: MeterReading,
): [SimMeasurand, Measurement][] {
  const measured: [SimMeasurand, Measurement][] = [];
  for (const measurand of measurands) {
    const value = measure(measurand, reading);
    if (value) measured.push([measurand, value]);
  }
  if (measured.length === 0) {
    const register = 'Energy.Active.Import.Register';
    measured.push([register, measurement(String(reading.registerWh), 'Wh')]);
  }
  return measured;
}

function isSupported(name: string): name is SimMeasurand {
  return (SUPPORTED_MEASURANDS as readonly string[]).includes(name);
}

/** Parses a comma-separated measurand list; undefined if any entry is unsupported. */
export function parseMeasurandList(csv: string): SimMeasurand[] | undefined {
  const names = csv
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  const measurands: SimMeasurand[] = [];
  for (const name of names) {
    if (!isSupported(name)) return undefined;
    measurands.push(name);
  }
  return measurands;
}
