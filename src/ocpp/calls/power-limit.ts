import type { PowerLimit } from '../port.js';
import type { AdapterContext } from '../protocol-adapter.js';

/** The unit a charging schedule states its limit in: amperes per phase or watts. */
export type RateUnit = 'A' | 'W';

/** The grid voltage per phase the amperes of an AC ceiling are computed at. */
export const PHASE_VOLTAGE_V = 230;
const DEFAULT_PHASES = 3;

/**
 * The units a charger says it takes (1.6 ChargingScheduleAllowedChargingRateUnit "Current,Power";
 * 2.0.1 SmartChargingCtrlr.RateUnit "A,W"), or null when its answer names neither.
 */
export function parseRateUnits(value: string | null): ReadonlySet<RateUnit> | null {
  if (value === null) return null;
  const units = new Set<RateUnit>();
  for (const word of value.split(',').map((w) => w.trim().toLowerCase())) {
    if (word === 'current' || word === 'a') units.add('A');
    if (word === 'power' || word === 'w') units.add('W');
  }
  return units.size === 0 ? null : units;
}

/**
 * Watts for DC (the link voltage moves with the battery, amperes would not hold the power), amperes
 * for AC or an unstated type (many AC chargers take only a current limit); what the charger said
 * it accepts overrides the preference when it takes only the other unit.
 */
export function rateUnitFor(
  accepted: ReadonlySet<RateUnit> | null,
  type: 'AC' | 'DC' | null,
): RateUnit {
  const preferred: RateUnit = type === 'DC' ? 'W' : 'A';
  if (accepted === null || accepted.has(preferred)) return preferred;
  return preferred === 'A' ? 'W' : 'A';
}

/** One schedule period of a ceiling, in the profile's unit; both versions spell it alike. */
export interface CeilingPeriod {
  startPeriod: 0;
  limit: number;
  numberPhases?: number;
}

/**
 * The period a ceiling of `watts` is sent as. Rounded DOWN (0.1 A, the schemas' resolution; whole
 * watts) so the charger is never allowed more than asked. DC states no phases (the 2.0.1 rule).
 */
export function ceilingPeriod(
  watts: number,
  unit: RateUnit,
  type: 'AC' | 'DC' | null,
  phases: PowerLimit['phases'],
): CeilingPeriod {
  if (!Number.isFinite(watts) || watts < 0) throw new RangeError(`power limit ${watts} W`);
  const numberPhases = phases ?? DEFAULT_PHASES;
  const limit =
    unit === 'W'
      ? Math.floor(watts)
      : Math.floor((watts / (PHASE_VOLTAGE_V * numberPhases)) * 10 + 1e-9) / 10;
  return type === 'DC' ? { startPeriod: 0, limit } : { startPeriod: 0, limit, numberPhases };
}

/** A ceiling as a charging schedule states it. */
export interface Ceiling {
  unit: RateUnit;
  period: CeilingPeriod;
}

/** The schedule a ceiling of `watts` goes out as on this connector of this charger. */
export function ceilingFor(
  ctx: AdapterContext,
  accepted: ReadonlySet<RateUnit> | null,
  connectorId: string,
  watts: number,
  phases: PowerLimit['phases'],
): Ceiling {
  const type = ctx.site.connector(ctx.chargerId, connectorId)?.type ?? null;
  const unit = rateUnitFor(accepted, type);
  return { unit, period: ceilingPeriod(watts, unit, type, phases) };
}
