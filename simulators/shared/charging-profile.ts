import { packVoltage } from './meter-reading.js';

/** The parts of a charging schedule (1.6 and 2.0.1 spell them alike) the simulators use. */
export interface ScheduleLike {
  chargingRateUnit: 'W' | 'A';
  chargingSchedulePeriod: { startPeriod: number; limit: number }[];
}

/**
 * The power limit a charger applies now from a TxProfile or TxDefaultProfile: the period in force
 * at the schedule's start (relative schedules start with the transaction). Amperes are converted
 * at the DC link's voltage. Undefined for other purposes, which limit nothing here.
 */
export function profileLimitW(
  purpose: string,
  schedule: ScheduleLike,
  socPercent: number | undefined,
): number | undefined {
  if (purpose !== 'TxProfile' && purpose !== 'TxDefaultProfile') return undefined;
  const first = [...schedule.chargingSchedulePeriod]
    .filter((period) => period.startPeriod <= 0)
    .sort((a, b) => b.startPeriod - a.startPeriod)[0];
  if (!first) return undefined;
  return schedule.chargingRateUnit === 'W' ? first.limit : first.limit * packVoltage(socPercent);
}
