import { packVoltage } from './meter-reading.js';

/** One period of a charging schedule (1.6 and 2.0.1 spell it alike). */
export interface SchedulePeriod {
  startPeriod: number;
  limit: number;
  numberPhases?: number;
}

/** The parts of a charging schedule (1.6 and 2.0.1 spell them alike) the simulators use. */
export interface ScheduleLike {
  chargingRateUnit: 'W' | 'A';
  chargingSchedulePeriod: SchedulePeriod[];
  duration?: number;
  startSchedule?: string;
}

/** Where a profile sits in the composite: the charger's ceiling, a default, or one transaction's. */
export type ProfileScope = 'max' | 'txDefault' | 'tx';

/** A profile as the central system sends it, in either version's words. */
export interface ProfileRequest {
  id: number;
  purpose: string;
  stackLevel: number;
  kind: string;
  recurrencyKind?: string;
  transactionId?: string | number;
  schedule: ScheduleLike;
}

export interface InstalledProfile extends ProfileRequest {
  /** 0: the whole charger. */
  outletId: number;
  scope: ProfileScope;
  /** performance.now() and the wall clock when installed: the schedule's clock starts there. */
  installedAtMs: number;
  installedAtDateMs: number;
}

/** What the composite needs to know of an outlet at evaluation time. */
export interface OutletProfileView {
  id: number;
  transactionId: string | number | undefined;
  /** performance.now() at the transaction's start: a Relative schedule's zero. */
  transactionStartMs: number | undefined;
  socPercent: number | undefined;
}

/** The grid voltage per phase an AC current limit is converted at. */
export const AC_PHASE_VOLTAGE = 230;
const DAY_SECONDS = 86_400;
const WEEK_SECONDS = 7 * DAY_SECONDS;
/** A composite schedule longer than this many periods is cut (a guard against a tiny recurrence). */
const MAX_COMPOSITE_PERIODS = 1_000;

export const scopeOf = (purpose: string): ProfileScope | undefined =>
  purpose === 'TxProfile'
    ? 'tx'
    : purpose === 'TxDefaultProfile'
      ? 'txDefault'
      : purpose === 'ChargePointMaxProfile' || purpose === 'ChargingStationMaxProfile'
        ? 'max'
        : undefined;

/**
 * A limit in watts: W as it is; A per phase at 230 V times numberPhases when the period states
 * phases (an AC supply), else at the DC link's voltage (the simulated charger is DC).
 */
export function wattsOf(limit: number, unit: 'W' | 'A', phases: number | undefined, soc?: number) {
  if (unit === 'W') return limit;
  return phases === undefined ? limit * packVoltage(soc) : limit * AC_PHASE_VOLTAGE * phases;
}

/** The profile's clock: simulated seconds since its schedule first started (may be negative). */
function elapsedSeconds(
  p: InstalledProfile,
  outlet: OutletProfileView,
  nowMs: number,
  timeFactor: number,
): number {
  if (p.kind === 'Relative') {
    const start = outlet.transactionStartMs;
    return start === undefined ? 0 : ((nowMs - start) / 1000) * timeFactor;
  }
  // Absolute and Recurring: the charger agrees with the central system's clock when the
  // profile arrives; from then on simulated time runs at the time factor.
  const origin =
    p.schedule.startSchedule === undefined
      ? p.installedAtDateMs
      : Date.parse(p.schedule.startSchedule);
  const atInstall = (p.installedAtDateMs - origin) / 1000;
  return atInstall + ((nowMs - p.installedAtMs) / 1000) * timeFactor;
}

/** A Recurring schedule starts over every day (or week) after its start. */
function withinCycle(p: InstalledProfile, elapsed: number): number {
  if (p.kind !== 'Recurring') return elapsed;
  const cycle = p.recurrencyKind === 'Weekly' ? WEEK_SECONDS : DAY_SECONDS;
  return ((elapsed % cycle) + cycle) % cycle;
}

/** The period in force `elapsed` seconds into the schedule, and seconds until the next change. */
function periodAt(
  p: InstalledProfile,
  elapsed: number,
): { period?: SchedulePeriod; nextChange?: number } {
  const { duration, chargingSchedulePeriod: periods } = p.schedule;
  const boundaries = periods.map((q) => q.startPeriod);
  if (duration !== undefined) boundaries.push(duration);
  if (p.kind === 'Recurring')
    boundaries.push(p.recurrencyKind === 'Weekly' ? WEEK_SECONDS : DAY_SECONDS);
  const later = boundaries.filter((b) => b > elapsed);
  const nextChange = later.length === 0 ? undefined : Math.min(...later) - elapsed;
  if (elapsed < 0 || (duration !== undefined && elapsed >= duration)) return { nextChange };
  const period = [...periods]
    .filter((q) => q.startPeriod <= elapsed)
    .sort((a, b) => b.startPeriod - a.startPeriod)[0];
  return period ? { period, nextChange } : { nextChange };
}

/**
 * The charging profiles installed on one charger, per outlet, and the limit they compose to:
 * min(charger max profile, the transaction's profile of the highest stack level in force, else
 * the default profile of the highest level), as OCPP's composite schedule defines it.
 */
export class ChargingProfiles {
  private profiles: InstalledProfile[] = [];

  constructor(private readonly timeFactor: number) {}

  /** Same id, or same outlet, purpose, stack level (and transaction): the new one replaces it. */
  install(request: ProfileRequest, outletId: number, scope: ProfileScope): void {
    const replaced = (p: InstalledProfile) =>
      p.id === request.id ||
      (p.outletId === outletId &&
        p.purpose === request.purpose &&
        p.stackLevel === request.stackLevel &&
        p.transactionId === request.transactionId);
    this.profiles = this.profiles.filter((p) => !replaced(p));
    this.profiles.push({
      ...request,
      outletId,
      scope,
      installedAtMs: performance.now(),
      installedAtDateMs: Date.now(),
    });
  }

  /** Removes by id, or by every criterion given (none: all); returns how many went. */
  clear(criteria: { id?: number; outletId?: number; purpose?: string; stackLevel?: number }) {
    const matches = (p: InstalledProfile) =>
      criteria.id !== undefined
        ? p.id === criteria.id
        : (criteria.outletId === undefined || p.outletId === criteria.outletId) &&
          (criteria.purpose === undefined || p.purpose === criteria.purpose) &&
          (criteria.stackLevel === undefined || p.stackLevel === criteria.stackLevel);
    const before = this.profiles.length;
    this.profiles = this.profiles.filter((p) => !matches(p));
    return before - this.profiles.length;
  }

  /** A TxProfile dies with its transaction. */
  dropTransactionProfiles(outletId: number): void {
    this.profiles = this.profiles.filter((p) => !(p.scope === 'tx' && p.outletId === outletId));
  }

  list(): readonly InstalledProfile[] {
    return this.profiles;
  }

  /**
   * The limit in W on the outlet `offsetSeconds` (simulated) from now, or undefined for none, and
   * the simulated seconds until any profile that could change it moves to another period.
   */
  limitOn(
    outlet: OutletProfileView,
    nowMs = performance.now(),
    offsetSeconds = 0,
  ): { limitW?: number; nextChange?: number } {
    let nextChange: number | undefined;
    const pick = (candidates: InstalledProfile[]): number | undefined => {
      const ordered = [...candidates].sort(
        (a, b) => b.stackLevel - a.stackLevel || b.outletId - a.outletId,
      );
      for (const p of ordered) {
        const since = elapsedSeconds(p, outlet, nowMs, this.timeFactor) + offsetSeconds;
        const elapsed = withinCycle(p, since);
        const at = periodAt(p, elapsed);
        if (at.nextChange !== undefined)
          nextChange = Math.min(nextChange ?? Infinity, at.nextChange);
        if (at.period) {
          const { limit, numberPhases } = at.period;
          return wattsOf(limit, p.schedule.chargingRateUnit, numberPhases, outlet.socPercent);
        }
      }
      return undefined;
    };
    const max = pick(this.profiles.filter((p) => p.scope === 'max'));
    let tx: number | undefined;
    if (outlet.id !== 0 && outlet.transactionId !== undefined) {
      tx = pick(
        this.profiles.filter(
          (p) =>
            p.scope === 'tx' &&
            p.outletId === outlet.id &&
            p.transactionId === outlet.transactionId,
        ),
      );
      tx ??= pick(
        this.profiles.filter(
          (p) => p.scope === 'txDefault' && (p.outletId === outlet.id || p.outletId === 0),
        ),
      );
    }
    const limits = [max, tx].filter((l): l is number => l !== undefined);
    const result: { limitW?: number; nextChange?: number } = {};
    if (limits.length > 0) result.limitW = Math.max(0, Math.min(...limits));
    if (nextChange !== undefined) result.nextChange = nextChange;
    return result;
  }

  /**
   * GetCompositeSchedule: the limit over the next `duration` simulated seconds, one period per
   * change, in W or A (A at the DC link voltage, rounded down); no profile: the charger's max.
   */
  composite(
    outlet: OutletProfileView,
    duration: number,
    unit: 'W' | 'A',
    chargerMaxW: number,
  ): { startPeriod: number; limit: number }[] {
    const nowMs = performance.now();
    const periods: { startPeriod: number; limit: number }[] = [];
    let offset = 0;
    while (offset < duration && periods.length < MAX_COMPOSITE_PERIODS) {
      const { limitW, nextChange } = this.limitOn(outlet, nowMs, offset);
      const watts = Math.min(limitW ?? chargerMaxW, chargerMaxW);
      const limit =
        unit === 'W'
          ? Math.floor(watts)
          : Math.floor((watts / packVoltage(outlet.socPercent)) * 10) / 10;
      if (periods.at(-1)?.limit !== limit) periods.push({ startPeriod: Math.floor(offset), limit });
      if (nextChange === undefined) break;
      offset += Math.max(1, Math.ceil(nextChange));
    }
    return periods;
  }
}
