import { energyOf, measurandList } from './metering.js';

/** What a charger said of the sample interval the gateway asked for, in either protocol. */
export interface IntervalAnswer {
  /** The interval asked for, in seconds. */
  wanted: number;
  /** The charger's answer to the set (Accepted, RebootRequired, Rejected, ...); null: not sent (held). */
  answer: string | null;
  /** The interval the charger holds, read last; null when it does not say. */
  held: string | null;
}

/**
 * Why the charger will not sample a transaction at least as often as asked, or null when it will.
 * RebootRequired is not in effect whatever the read-back says (chargers report the stored value);
 * 0 is no periodic sample at all. A charger that does not say what it holds is given the benefit
 * of the doubt, as for its measurands (metering.ts).
 */
export function samplingGap({ wanted, answer, held }: IntervalAnswer): string | null {
  if (answer === 'RebootRequired') {
    return `sample interval ${wanted} s answered RebootRequired: not in effect until a reboot`;
  }
  if (held === null) return null;
  const seconds = Number(held.trim());
  if (held.trim() !== '' && seconds > 0 && seconds <= wanted) return null;
  return seconds === 0
    ? 'no meter samples during a transaction (sample interval 0)'
    : `sample interval read back as ${JSON.stringify(held)}, not ${wanted} s`;
}

/** What a charger said of the measurand list asked for: its answer (null: not sent), the list before. */
export interface ListAnswer {
  answer: string | null;
  before: string | null;
}

/**
 * Why the charger will send no energy in its transaction samples until a reboot, or null: a list
 * answered RebootRequired leaves the one it held before in effect (not known: the benefit of the
 * doubt).
 */
export function measurandGap({ answer, before }: ListAnswer): string | null {
  if (answer !== 'RebootRequired' || before === null) return null;
  if (energyOf(measurandList(before)) !== 'none') return null;
  return `measurand list answered RebootRequired: until a reboot it samples ${JSON.stringify(before)}, no energy`;
}
