import type { TappedFrame } from './wire-tap.js';

/** A connector of the site as the trace knows it from the config: its key and physical ceiling. */
export interface TracedConnector {
  chargerId: string;
  connectorId: string;
  maxW: number;
  /** Volts per ampere per phase for profiles in A (AC: 230; DC: the pack's highest voltage). */
  volts: number;
  /** Phases a schedule in A counts when its period states none (AC: 3; DC: 1). */
  phases: 1 | 3;
}

/** The site at one received message: what the meters said, what was allowed, what the limit was. */
export interface TracePoint {
  atMs: number;
  /** Sum of the latest reported power of every connector. */
  measuredW: number;
  /** The same, a connector that accepted a lower allowance but has not reported since counted at it. */
  settledW: number;
  /** Sum of the allowances in force of connectors in a transaction (no profile: the connector's max). */
  allowedW: number;
  limitW: number;
  /** What the site may show now: the limit, or the previous one while a lower is still landing. */
  boundW: number;
}

export interface TraceViolation {
  atMs: number;
  what: string;
  /** The site at the time (describe()), kept for the first few violations. */
  site?: string;
}

interface Profile {
  id: number;
  purpose: string;
  stackLevel: number;
  limitW: number;
  transactionRef?: string;
  /** The charger-wide (connector/EVSE 0) default. */
  wide: boolean;
}

interface ConnectorTrack {
  spec: TracedConnector;
  powerW: number;
  sampleAtMs: number;
  transactionRef?: string;
  profiles: Profile[];
  /** When it last accepted an allowance below its previous one (tap clock, and Date.now()). */
  loweredAtMs: number;
  loweredAtEpochMs: number;
  /** When its latest reported reading was taken: its meter value's timestamp (Date.now() clock). */
  takenAtEpochMs: number;
}

interface PendingCall {
  action: string;
  payload: Record<string, unknown>;
  atMs: number;
}

/** Rounding between a profile in A and a meter in W, and the meter's whole watts. */
const SLACK_FRACTION = 0.005;
const SLACK_W = 50;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const num = (v: unknown): number | undefined => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
};

/**
 * The site's power from the wire (a WireTap's frames), and the tolerance rule checked at every
 * frame (docs/load-management.md, "Measured"):
 *  - a charger gets one meter interval to obey a LOWER allowance: its reports arriving within
 *    that window after it accepted the lower count at most at the new allowance; after it, a
 *    connector reports at most its allowance;
 *  - the site's measured power (each connector's latest report summed, counted as above) stays
 *    within the limit;
 *  - after the limit is LOWERED, until the allowances in force fit the new limit, the site may
 *    stay at the previous limit (the decrease is the most it may be over); a raise has no window;
 *  - the allowances in force (sessions without a profile at their connector's maximum) stay
 *    within that same bound.
 */
export class SiteTrace {
  readonly points: TracePoint[] = [];
  readonly violations: TraceViolation[] = [];
  /** Every accepted SetChargingProfile: sent and answered (performance.now() ms). */
  readonly profileRoundTrips: { chargerId: string; sentMs: number; answeredMs: number }[] = [];
  readonly limitChanges: { atMs: number; fromW: number; toW: number }[] = [];
  /** Profiles the chargers refused, by charger. */
  readonly refusals = new Map<string, number>();
  private readonly connectors = new Map<string, ConnectorTrack>();
  private readonly transactions = new Map<string, string>(); // chargerId|ref → connector key
  private readonly pending = new Map<string, PendingCall>();
  private limit: number;
  private pendingBound?: number;
  /** When a SetChargingProfile or ClearChargingProfile was last sent or answered. */
  private lastProfileMs = 0;

  /**
   * @param obeyWindowMs how long a charger has to show it obeyed a lower allowance (wall-clock
   *   ms at the simulators' time factor). Readings taken sooner after the lower was accepted
   *   count at most at the new allowance.
   */
  constructor(
    connectors: readonly TracedConnector[],
    limitW: number,
    private readonly obeyWindowMs = 0,
  ) {
    this.limit = limitW;
    for (const spec of connectors) {
      this.connectors.set(key(spec.chargerId, spec.connectorId), {
        spec,
        powerW: 0,
        sampleAtMs: 0,
        profiles: [],
        loweredAtMs: -1,
        loweredAtEpochMs: -1,
        takenAtEpochMs: 0,
      });
    }
  }

  get limitW(): number {
    return this.limit;
  }

  /** The limit the site must keep from now on: call it before asking the gateway for the change. */
  setLimit(watts: number, atMs = performance.now()): void {
    if (watts === this.limit) return;
    this.limitChanges.push({ atMs, fromW: this.limit, toW: watts });
    if (watts < this.limit) this.pendingBound = Math.max(this.pendingBound ?? 0, this.limit);
    this.limit = watts;
    this.check(atMs);
  }

  /** The allowance in force on a connector now (its maximum without a profile). */
  allowance(chargerId: string, connectorId: string): number {
    const c = this.track(chargerId, connectorId);
    return c ? allowanceOf(c) : Number.NaN;
  }

  reportedPower(chargerId: string, connectorId: string): number {
    return this.track(chargerId, connectorId)?.powerW ?? Number.NaN;
  }

  /** Profile calls sent and not yet answered. */
  profilesInFlight(): number {
    return [...this.pending.values()].filter((c) => isProfileCall(c.action)).length;
  }

  /** When the site's profiles last moved (a call sent or answered), performance.now() ms. */
  get lastProfileActivityMs(): number {
    return this.lastProfileMs;
  }

  /** True once every connector in a transaction has reported after its last accepted profile. */
  settled(): boolean {
    return (
      this.pendingBound === undefined &&
      [...this.connectors.values()].every((c) => c.transactionRef === undefined || this.obeyed(c))
    );
  }

  /** The violations grouped by what broke, with the first time (ms since the first point) and count. */
  violationSummary(): string[] {
    const start = this.points[0]?.atMs ?? 0;
    const groups = new Map<
      string,
      { first: number; count: number; worst: string; site?: string }
    >();
    for (const v of this.violations) {
      const kind = v.what.replace(/[\d.]+ W/g, 'N W');
      const g = groups.get(kind);
      if (g) g.count++;
      else groups.set(kind, { first: v.atMs - start, count: 1, worst: v.what, site: v.site });
    }
    return [...groups.values()].map(
      (g) =>
        `${g.worst} (first at ${Math.round(g.first)} ms, ${g.count}×)` +
        (g.site ? `; then: ${g.site}` : ''),
    );
  }

  /** The site now, for a failure message: the bound, each connector in a transaction. */
  describe(): string {
    const connectors = [...this.connectors.values()]
      .filter((c) => c.transactionRef !== undefined)
      .map(
        (c) =>
          `${c.spec.chargerId}/${c.spec.connectorId} ${c.powerW} W of ${Math.round(allowanceOf(c))} W` +
          (this.obeyed(c) ? '' : ' (not reported since its lower)'),
      );
    return (
      `limit ${this.limit} W, bound ${this.pendingBound ?? this.limit} W, ` +
      `${this.profilesInFlight()} profile calls in flight; ${connectors.join('; ')}`
    );
  }

  record(frame: TappedFrame): void {
    const [type, id] = frame.message;
    if (type === 2 && typeof id === 'string') {
      const action = String(frame.message[2]);
      const payload = obj(frame.message[3]);
      this.pending.set(`${frame.chargerId}|${id}`, { action, payload, atMs: frame.atMs });
      if (isProfileCall(action)) this.lastProfileMs = frame.atMs;
      if (frame.direction === 'up') this.chargerCall(frame, action, payload);
      return;
    }
    if ((type === 3 || type === 4) && typeof id === 'string') {
      const call = this.pending.get(`${frame.chargerId}|${id}`);
      if (!call) return;
      this.pending.delete(`${frame.chargerId}|${id}`);
      if (isProfileCall(call.action)) this.lastProfileMs = frame.atMs;
      const answer = type === 3 ? obj(frame.message[2]) : {};
      if (frame.direction === 'down') this.gatewayAnswer(frame, call, answer);
      else this.chargerAnswer(frame, call, answer);
    }
  }

  private track(chargerId: string, connectorId: string | number): ConnectorTrack | undefined {
    return this.connectors.get(key(chargerId, String(connectorId)));
  }

  private chargerCall(frame: TappedFrame, action: string, p: Json): void {
    const { chargerId } = frame;
    if (action === 'MeterValues') {
      const c = this.track(chargerId, String(p.connectorId ?? p.evseId));
      const power = powerOf(p.meterValue);
      if (c && power !== undefined) this.sample(c, power, frame, p.meterValue);
    } else if (action === 'StartTransaction') {
      // The transaction's ref comes with the gateway's answer; the connector draws from now.
      const c = this.track(chargerId, String(p.connectorId));
      if (!c) return;
      c.transactionRef = '';
      this.check(frame.atMs);
    } else if (action === 'StopTransaction') {
      const ref = String(p.transactionId);
      const c = this.connectors.get(this.transactions.get(`${chargerId}|${ref}`) ?? '');
      if (c) this.end(c, ref, frame.atMs);
    } else if (action === 'TransactionEvent') {
      const ref = String(obj(p.transactionInfo).transactionId);
      const evse = num(obj(p.evse).id);
      if (evse !== undefined)
        this.transactions.set(`${chargerId}|${ref}`, key(chargerId, String(evse)));
      const c = this.connectors.get(this.transactions.get(`${chargerId}|${ref}`) ?? '');
      if (!c) return;
      if (p.eventType === 'Ended') return this.end(c, ref, frame.atMs);
      c.transactionRef = ref;
      const power = powerOf(p.meterValue);
      if (power !== undefined) this.sample(c, power, frame, p.meterValue);
    }
  }

  private gatewayAnswer(frame: TappedFrame, call: PendingCall, answer: Json): void {
    if (call.action !== 'StartTransaction') return;
    const c = this.track(frame.chargerId, String(call.payload.connectorId));
    if (!c) return;
    const ref = String(answer.transactionId);
    c.transactionRef = ref;
    this.transactions.set(`${frame.chargerId}|${ref}`, key(frame.chargerId, c.spec.connectorId));
  }

  private chargerAnswer(frame: TappedFrame, call: PendingCall, answer: Json): void {
    const accepted = answer.status === 'Accepted';
    if (call.action === 'SetChargingProfile') {
      if (!accepted) {
        this.refusals.set(frame.chargerId, (this.refusals.get(frame.chargerId) ?? 0) + 1);
        return;
      }
      this.profileRoundTrips.push({
        chargerId: frame.chargerId,
        sentMs: call.atMs,
        answeredMs: frame.atMs,
      });
      this.applyProfile(frame, call.payload);
    } else if (
      (call.action === 'RemoteStartTransaction' || call.action === 'RequestStartTransaction') &&
      accepted &&
      call.payload.chargingProfile !== undefined
    ) {
      // A remote start may carry the transaction's first TxProfile.
      this.applyProfile(frame, {
        connectorId: call.payload.connectorId ?? call.payload.evseId,
        chargingProfile: call.payload.chargingProfile,
      });
    } else if (call.action === 'ClearChargingProfile' && accepted) {
      this.clearProfiles(frame, call.payload);
    }
  }

  private applyProfile(frame: TappedFrame, p: Json): void {
    const profile = obj(p.csChargingProfiles ?? p.chargingProfile);
    const schedule = obj(
      Array.isArray(profile.chargingSchedule)
        ? profile.chargingSchedule[0]
        : profile.chargingSchedule,
    );
    const first = arr(schedule.chargingSchedulePeriod)
      .map(obj)
      .filter((period) => (num(period.startPeriod) ?? 0) <= 0)
      .sort((a, b) => (num(b.startPeriod) ?? 0) - (num(a.startPeriod) ?? 0))[0];
    const limit = num(first?.limit);
    if (!first || limit === undefined) return;
    const connectorId = num(p.connectorId ?? p.evseId) ?? 0;
    const targets =
      connectorId === 0
        ? [...this.connectors.values()].filter((c) => c.spec.chargerId === frame.chargerId)
        : [this.track(frame.chargerId, connectorId)].filter((c) => c !== undefined);
    for (const c of targets) {
      const phases = num(first.numberPhases) ?? c.spec.phases;
      const limitW = schedule.chargingRateUnit === 'A' ? limit * c.spec.volts * phases : limit;
      const entry: Profile = {
        id: num(profile.chargingProfileId ?? profile.id) ?? 0,
        purpose: String(profile.chargingProfilePurpose),
        stackLevel: num(profile.stackLevel) ?? 0,
        limitW,
        wide: connectorId === 0,
      };
      if (profile.transactionId !== undefined) entry.transactionRef = String(profile.transactionId);
      const before = allowanceOf(c);
      // A profile replaces the one of the same id, or of the same purpose and stack level.
      c.profiles = c.profiles.filter(
        (q) =>
          q.id !== entry.id &&
          !(
            q.purpose === entry.purpose &&
            q.stackLevel === entry.stackLevel &&
            q.wide === entry.wide
          ),
      );
      c.profiles.push(entry);
      if (allowanceOf(c) < before) {
        c.loweredAtMs = frame.atMs;
        c.loweredAtEpochMs = frame.atEpochMs;
      }
    }
    this.check(frame.atMs);
  }

  private clearProfiles(frame: TappedFrame, p: Json): void {
    const criteria = obj(p.chargingProfileCriteria);
    const id = num(p.id ?? p.chargingProfileId);
    const connectorId = num(p.connectorId ?? criteria.evseId);
    const purpose = p.chargingProfilePurpose ?? criteria.chargingProfilePurpose;
    const stackLevel = num(p.stackLevel ?? criteria.stackLevel);
    for (const c of this.connectors.values()) {
      if (c.spec.chargerId !== frame.chargerId) continue;
      if (
        connectorId !== undefined &&
        connectorId !== 0 &&
        c.spec.connectorId !== String(connectorId)
      )
        continue;
      c.profiles = c.profiles.filter(
        (q) =>
          !(
            (id === undefined || q.id === id) &&
            (purpose === undefined || q.purpose === purpose) &&
            (stackLevel === undefined || q.stackLevel === stackLevel)
          ),
      );
    }
    this.check(frame.atMs);
  }

  private sample(c: ConnectorTrack, powerW: number, frame: TappedFrame, meterValue: unknown): void {
    const atMs = frame.atMs;
    c.powerW = powerW;
    c.sampleAtMs = atMs;
    const stamp = Date.parse(String(obj(arr(meterValue).at(-1)).timestamp));
    c.takenAtEpochMs = Number.isFinite(stamp) ? stamp : frame.atEpochMs;
    const allowed = allowanceOf(c);
    if (
      c.transactionRef !== undefined &&
      this.obeyed(c) &&
      powerW > allowed * (1 + SLACK_FRACTION) + SLACK_W
    ) {
      this.violate({
        atMs,
        what: `${c.spec.chargerId}/${c.spec.connectorId} reported ${powerW} W over its accepted allowance ${Math.round(allowed)} W`,
      });
    }
    this.check(atMs);
  }

  private violate(v: TraceViolation): void {
    if (this.violations.length < 20) v.site = this.describe();
    this.violations.push(v);
  }

  /**
   * Its latest report was taken (the meter value's own timestamp: when the charger read its
   * meter, however late the frame arrived) at least the obey window after its last lower was
   * accepted.
   */
  private obeyed(c: ConnectorTrack): boolean {
    return c.loweredAtMs < 0 || c.takenAtEpochMs >= c.loweredAtEpochMs + this.obeyWindowMs;
  }

  private end(c: ConnectorTrack, ref: string, atMs: number): void {
    c.powerW = 0;
    c.sampleAtMs = atMs;
    c.transactionRef = undefined;
    c.profiles = c.profiles.filter((q) => q.purpose !== 'TxProfile');
    this.transactions.delete(`${c.spec.chargerId}|${ref}`);
    this.check(atMs);
  }

  private check(atMs: number): void {
    let measuredW = 0;
    let settledW = 0;
    let allowedW = 0;
    for (const c of this.connectors.values()) {
      const allowed = allowanceOf(c);
      measuredW += c.powerW;
      settledW += this.obeyed(c) ? c.powerW : Math.min(c.powerW, allowed);
      if (c.transactionRef !== undefined) allowedW += allowed;
    }
    if (this.pendingBound !== undefined && allowedW <= this.limit) this.pendingBound = undefined;
    const boundW = this.pendingBound ?? this.limit;
    this.points.push({ atMs, measuredW, settledW, allowedW, limitW: this.limit, boundW });
    const slack = boundW * SLACK_FRACTION + SLACK_W;
    if (settledW > boundW + slack) {
      this.violate({
        atMs,
        what: `site measured ${Math.round(settledW)} W over ${boundW} W`,
      });
    }
    if (allowedW > boundW + slack) {
      this.violate({
        atMs,
        what: `site allowed ${Math.round(allowedW)} W over ${boundW} W`,
      });
    }
  }
}

function isProfileCall(action: string): boolean {
  return action === 'SetChargingProfile' || action === 'ClearChargingProfile';
}

function key(chargerId: string, connectorId: string): string {
  return `${chargerId}/${connectorId}`;
}

/**
 * OCPP's stack: a TxProfile of the running transaction beats any TxDefaultProfile; within a
 * purpose the highest stack level wins, a connector's own profile before the charger-wide one.
 */
function allowanceOf(c: ConnectorTrack): number {
  const tx = c.profiles.filter(
    (q) =>
      q.purpose === 'TxProfile' &&
      c.transactionRef !== undefined &&
      (q.transactionRef === undefined || q.transactionRef === c.transactionRef),
  );
  const pool = tx.length > 0 ? tx : c.profiles.filter((q) => q.purpose === 'TxDefaultProfile');
  const top = pool.sort(
    (a, b) => b.stackLevel - a.stackLevel || Number(a.wide) - Number(b.wide),
  )[0];
  return top ? Math.min(top.limitW, c.spec.maxW) : c.spec.maxW;
}

/** Active power of the last sample of a MeterValues / TransactionEvent meterValue list (W). */
function powerOf(meterValue: unknown): number | undefined {
  const last = obj(arr(meterValue).at(-1));
  let total: number | undefined;
  for (const sv of arr(last.sampledValue).map(obj)) {
    if (sv.measurand !== 'Power.Active.Import') continue;
    if (typeof sv.phase === 'string' && sv.phase.includes('N')) continue;
    const unit = String(sv.unit ?? obj(sv.unitOfMeasure).unit ?? 'W');
    const multiplier = num(obj(sv.unitOfMeasure).multiplier) ?? 0;
    const value = num(sv.value);
    if (value === undefined) continue;
    const watts = value * 10 ** multiplier * (unit === 'kW' ? 1000 : 1);
    // Per-phase values add up; a total without a phase stands alone.
    total = typeof sv.phase === 'string' ? (total ?? 0) + watts : watts;
  }
  return total;
}
