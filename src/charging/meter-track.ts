/**
 * Energy delivered in one transaction, from a charger register that may misbehave: samples that go
 * backwards, arrive late, or a register that resets when the charger reboots mid-session. Pure:
 * the lifecycle persists the track in the session row.
 *
 * The register is counted in segments. A reset starts a new segment and carries the energy of the
 * old one, so delivered energy is neither lost nor negative. Every rule errs towards the driver:
 * whatever cannot be proven from the charger's own register is not charged
 * (test/meter-track.test.ts checks it for random registers).
 *
 * Plausibility: no connector delivers more than its maximum power for the time that passed. With a
 * bound, a register gain above `maxPowerW` × the time since the last counted reading is not
 * counted: it is held (verdict 'implausible', the track unchanged) until a later reading, far
 * enough in time from the last counted one, makes the whole gain possible. So a register jump is
 * never billed unconfirmed and never reaches the paid energy on its own, and delivered energy
 * never exceeds max power × time. A gain's time runs from when the last counted reading was taken
 * at the earliest (the charger's stamp placed by its clock offset, charger-clocks.ts: never after it
 * arrived, never before the reading counted before it) to when the new one arrived (it was taken by
 * then). A queued burst arrives within a second but spans the time it was measured over: on arrival
 * times alone it would be a gain too fast for the connector, held until a later reading caught up,
 * which at full power never happens (the session would be billed far below what it delivered).
 * Stamps without milliseconds only widen the window. A charger clock that cannot be used (never
 * set) leaves the receive time for both ends. Two readings in the same millisecond are allowed
 * one millisecond (clock resolution). Two readings of one clock epoch (no step between them,
 * charger-clocks.ts) are at least their stamps apart: a queue replayed after the charger's clock
 * stepped forward is placed at its arrival until the new offset is known, and is not held for it.
 */
export interface MeterTrack {
  /** Register where the current segment began (the transaction's start until a reset). */
  segmentStartWh: number;
  /** Energy of the segments before the current one. */
  carriedWh: number;
  /** Highest register seen in the current segment. */
  lastWh: number;
  /** A lower register seen right after a reboot, not yet confirmed as a reset (null: none). */
  pendingResetWh: number | null;
  /** When `lastWh` was received (gateway clock, ms); null: not known (a row from before). */
  lastAtMs: number | null;
  /** Its stamp on the charger's clock and that clock's epoch; null: not known. */
  lastStampMs: number | null;
  lastEpoch: number | null;
}

/** What a register may have gained by `atMs`: a connector's power over the time that passed. */
export interface PowerBound {
  /** When the reading arrived: it was taken by then (the gain's time runs up to here). */
  atMs: number;
  /**
   * The earliest it can have been taken (the charger's stamp on our clock), kept as the time the
   * next gain runs from; `atMs` when not known.
   */
  takenAtMs?: number;
  /** Its stamp on the charger's clock and that clock's epoch, when known. */
  stampMs?: number;
  epoch?: number | null;
  /** The connector's maximum power, margin included. */
  maxPowerW: number;
}

/**
 * When the gain up to `bound` runs from: the last counted reading's time, or earlier when both
 * readings' stamps, on one clock epoch, say more time passed between them.
 */
function gainFromMs(t: MeterTrack, bound: PowerBound): number | null {
  if (t.lastAtMs === null) return null;
  const sameEpoch =
    bound.epoch !== undefined &&
    bound.epoch !== null &&
    bound.epoch === t.lastEpoch &&
    t.lastStampMs !== null &&
    bound.stampMs !== undefined;
  if (!sameEpoch) return t.lastAtMs;
  const onStamps = (bound.stampMs as number) - (t.lastStampMs as number);
  return onStamps > 0 ? Math.min(t.lastAtMs, bound.atMs - onStamps) : t.lastAtMs;
}

/**
 * The most energy `maxPowerW` can deliver from `fromMs` (null: unknown, unbounded) to `toMs`, plus
 * the meter's resolution: a register counting in 10 or 100 Wh steps moves a whole step at once,
 * and a final reading 1 Wh above a sample taken milliseconds before is the last Wh completing.
 */
export function maxGainWh(
  maxPowerW: number,
  fromMs: number | null,
  toMs: number,
  resolutionWh = 1,
): number {
  if (fromMs === null) return Number.POSITIVE_INFINITY;
  return Math.floor((maxPowerW * Math.max(1, toMs - fromMs)) / 3_600_000) + resolutionWh;
}

/**
 * The meter's step as the session's registers show it (its segment's start, the last counted and
 * the new one): the largest of 1,000, 100 and 10 Wh that divides all three, else 1 Wh. A 1 Wh meter
 * that reads round three times by chance is allowed that one step more, once.
 */
export function resolutionWh(...registersWh: number[]): number {
  return [1_000, 100, 10].find((step) => registersWh.every((wh) => wh % step === 0)) ?? 1;
}

export type RegisterVerdict =
  | { kind: 'advanced' | 'reset' | 'reset_pending'; track: MeterTrack }
  | { kind: 'ignored' }
  | { kind: 'implausible'; gainWh: number; maxGainWh: number };

export function deliveredWh(t: MeterTrack): number {
  return Math.max(0, t.carriedWh + t.lastWh - t.segmentStartWh);
}

/**
 * Applies a sampled register.
 * - Below the last one right after the charger rebooted, or below the segment's start without a
 *   reboot (fellWithoutBoot): perhaps a reset, perhaps a meter reading 0 while it boots. It is
 *   held until the next sample says which.
 * - The next sample at or above the last one: it was a glitch; counting goes on as before.
 * - The next sample below the last one but not below the held one: the register did reset; a new
 *   segment counts from the held register. (The energy between the last sample before the reboot
 *   and the first after it is not proven and not charged.)
 * - At or above the last one otherwise: energy flowed.
 * - Below it otherwise: out of order or garbage; ignored (a register never runs backwards).
 * - With a `bound`, any gain counted (above the last register, or above a held reset) must fit in
 *   the connector's power since the last counted reading; otherwise it is 'implausible'.
 */
export function applyRegister(
  t: MeterTrack,
  registerWh: number,
  afterReboot: boolean,
  bound?: PowerBound,
): RegisterVerdict {
  if (registerWh < t.lastWh && (afterReboot || fellWithoutBoot(t, registerWh, bound))) {
    return { kind: 'reset_pending', track: { ...t, pendingResetWh: registerWh } };
  }
  const gainFrom = registerWh >= t.lastWh ? t.lastWh : t.pendingResetWh;
  if (gainFrom === null || registerWh < gainFrom) return { kind: 'ignored' };
  // A held drop is confirmed by a register counting up from it: the same figure again (a meter
  // reading 0 twice, a repeat) proves no segment and is still held.
  if (registerWh < t.lastWh && registerWh === gainFrom && !afterReboot) return { kind: 'ignored' };
  const limit = bound
    ? maxGainWh(
        bound.maxPowerW,
        gainFromMs(t, bound),
        bound.atMs,
        resolutionWh(t.segmentStartWh, gainFrom, registerWh),
      )
    : Infinity;
  if (registerWh - gainFrom > limit)
    return { kind: 'implausible', gainWh: registerWh - gainFrom, maxGainWh: limit };
  const taken = bound ? takenPoint(t, bound) : {};
  if (registerWh >= t.lastWh) {
    return {
      kind: 'advanced',
      track: { ...t, lastWh: registerWh, pendingResetWh: null, ...taken },
    };
  }
  return {
    kind: 'reset',
    track: {
      ...t,
      carriedWh: deliveredWh(t),
      segmentStartWh: gainFrom,
      lastWh: registerWh,
      pendingResetWh: null,
      ...taken,
    },
  };
}

/**
 * A register that fell without a boot, measured after the last counted reading, to at or below
 * where its segment began: a meter never jitters below the transaction's start, so this is the
 * register's life restarting (a reset to 0, a roll-over at the meter's maximum, a re-based
 * register counting from the transaction's start), held like a drop after a reboot until the next
 * reading counts up from it. A smaller drop, or one measured before the last counted reading (out
 * of order), is ignored as before: jitter, garbage or history.
 */
function fellWithoutBoot(t: MeterTrack, registerWh: number, bound?: PowerBound): boolean {
  if (t.pendingResetWh !== null || registerWh > t.segmentStartWh || !bound) return false;
  const takenAtMs = Math.min(bound.takenAtMs ?? bound.atMs, bound.atMs);
  return t.lastAtMs === null || takenAtMs > t.lastAtMs;
}

/** The counted reading's time, kept when it is the latest (with its stamp and epoch). */
function takenPoint(
  t: MeterTrack,
  bound: PowerBound,
): Pick<MeterTrack, 'lastAtMs' | 'lastStampMs' | 'lastEpoch'> {
  const takenAtMs = Math.min(bound.takenAtMs ?? bound.atMs, bound.atMs);
  if (t.lastAtMs !== null && takenAtMs < t.lastAtMs)
    return { lastAtMs: t.lastAtMs, lastStampMs: t.lastStampMs, lastEpoch: t.lastEpoch };
  return {
    lastAtMs: takenAtMs,
    lastStampMs: bound.stampMs ?? null,
    lastEpoch: bound.epoch ?? null,
  };
}

/**
 * Energy to settle on, given the charger's stop register, by the same rules as a sample: a stop
 * register at or above the last counted one is the charger's final word; one that confirms a held
 * reset counts from it; one below the last counted register (a reset after the last sample, a
 * register counting from 0 after a reboot while its samples were interval sums, garbage) cannot
 * take back what the samples proved: the last counted register counts.
 * With a `bound`, a stop register that gains more than the connector could have delivered since the
 * last counted reading is not trusted either.
 */
export function deliveredAtStop(t: MeterTrack, stopWh: number | null, bound?: PowerBound): number {
  const last = deliveredWh(t);
  const atStop = stopRegisterWh(t, stopWh);
  if (!bound || atStop <= last || stopWh === null) return atStop;
  const step = resolutionWh(t.segmentStartWh, t.lastWh, stopWh);
  return atStop - last <= maxGainWh(bound.maxPowerW, gainFromMs(t, bound), bound.atMs, step)
    ? atStop
    : last;
}

function stopRegisterWh(t: MeterTrack, stopWh: number | null): number {
  if (stopWh === null) return deliveredWh(t);
  if (t.pendingResetWh !== null && stopWh < t.lastWh && stopWh >= t.pendingResetWh)
    return deliveredWh(t) + stopWh - t.pendingResetWh;
  if (stopWh >= t.lastWh) return t.carriedWh + stopWh - t.segmentStartWh;
  return deliveredWh(t);
}
