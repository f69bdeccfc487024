import type { MeasuredTime } from '../ocpp/port.js';
import { applyRegister, deliveredWh, maxGainWh, type MeterTrack } from './meter-track.js';

/**
 * The money rules of a meter, read top to bottom: what one reading of a session's meter proves
 * (billed) and what it makes possible (the paid-energy stop is planned on it). "Bill on the
 * proven, stop on the possible, judge each reading at the time it was measured"
 * (docs/meter-readings.md lists every kind of reading and its fixed case).
 *
 * Pure: a session's meter state and one reading in, a judgement out (the new state's parts); no
 * I/O, no timers, no clock. The lifecycle persists the judgement, logs it and hands the possible
 * energy to the limit watch. The register's own arithmetic (segments, resets, the plausibility
 * bound) is meter-track.ts; test/meter-model.test.ts checks the rules below for random readings.
 */

/** What the session row holds of its meter. */
export interface MeterState {
  /** The start register; null until the charger said it (or its first live register). */
  startWh: number | null;
  /** The start as written when it had a decimal fraction (a kWh meterStart); else null. */
  startUnrounded: number | null;
  /** The start was taken from a live sample (the charger never said it). */
  startSampled: boolean;
  track: MeterTrack;
  /** The charger's timestamp of the held drop (track.pendingResetWh); null when none is held. */
  heldTimestamp: string | null;
  /** What the session may have delivered, when a reading raised it above the proven. */
  possibleWh: number | null;
  /** Energy delivered that no reading will prove (across a reset, before a late first register). */
  gapWh: number;
}

/** One register reading: when it was measured (the charger's clock placed on ours) and received. */
export interface RegisterReading {
  energyWh: number;
  powerW: number | null;
  timestamp: string;
  receivedAtMs: number;
  time: MeasuredTime;
  /** Sent as it was measured, not replayed from the charger's queue. */
  live: boolean;
}

/** What the model knows beside the reading. */
export interface Conditions {
  /** The connector's maximum power, margin included (W). */
  maxPowerW: number;
  /** The charger rebooted since the last counted reading. */
  afterReboot: boolean;
  /** The rate the session was last measured drawing at (Wh per ms); null before any. */
  rateWhPerMs: number | null;
  /** What the power the charger said may have delivered since the last counted reading. */
  power: PowerTrail | null;
}

export type Doubt =
  { kind: 'implausible'; gainWh: number; maxGainWh: number } | { kind: 'ignored' };

export type Judgement =
  /** Moves nothing (the reasons are in the first function below). */
  | { kind: 'not_counted'; why: 'queued_start' | 'queued_after_live_start' | 'held_repeat' }
  /** The first live register is the start; `gapWh`: what the power said before it. */
  | { kind: 'start'; startWh: number; gapWh: number }
  /** The register moved (or a drop is held); the possible energy and gap that follow. */
  | {
      kind: 'counted';
      verdict: 'advanced' | 'reset' | 'reset_pending';
      track: MeterTrack;
      possibleWh: number;
      gapWh: number;
      /** Set when the start was read in kWh at this reading (kwhStartWh). */
      rebasedStartWh?: number;
    }
  /** Not billed; `possibleWh` null when it raises nothing (history, or unbounded). */
  | {
      kind: 'doubted';
      doubt: Doubt;
      track: MeterTrack;
      possibleWh: number | null;
      rebasedStartWh?: number;
    };

/** What the readings prove: the bill. */
export function provenWh(m: MeterState): number {
  return m.startWh === null ? 0 : deliveredWh(m.track);
}

/** What the session may have delivered: the stop. Never below the proven. */
export function possibleWh(m: MeterState): number {
  return Math.max(provenWh(m) + m.gapWh, m.possibleWh ?? 0);
}

/** Judges one register reading against the session's meter. */
export function judgeRegister(m: MeterState, r: RegisterReading, c: Conditions): Judgement {
  if (m.startWh === null) {
    // A queued sample may have been measured before one delivered ahead of it, on the far side
    // of a meter reset: taken as the start, it would bill energy never delivered. Only a live
    // one, measured as it arrives, can stand in for the start register.
    if (!r.live) return { kind: 'not_counted', why: 'queued_start' };
    const gapWh = c.power ? trailWhAt(c.power, r.time.measuredAtMs, r.powerW, c.maxPowerW) : 0;
    return { kind: 'start', startWh: r.energyWh, gapWh };
  }
  // The start register is a live sample. A queued one was measured before it was sent, and
  // nothing the charger says places it after that start (2.0.1 sends its queue before live
  // messages; its clock may have reset with its meter): across a meter reset it would bill
  // energy never delivered. It does not move the register; live readings and a live stop do.
  if (m.startSampled && !r.live) return { kind: 'not_counted', why: 'queued_after_live_start' };
  // The reading held as a possible reset, again (same register and timestamp: a frame repeated
  // after a lost reply), is not a second reading and confirms nothing.
  if (
    m.track.pendingResetWh !== null &&
    r.energyWh === m.track.pendingResetWh &&
    r.timestamp === m.heldTimestamp
  )
    return { kind: 'not_counted', why: 'held_repeat' };
  const rebasedStartWh = kwhRebased(m, r.energyWh);
  const track =
    rebasedStartWh === null
      ? m.track
      : { ...m.track, segmentStartWh: rebasedStartWh, lastWh: rebasedStartWh };
  const rebased = rebasedStartWh === null ? {} : { rebasedStartWh };
  // The gain's time runs from when the last counted reading was taken (its stamp on our clock)
  // to this one's arrival: a queued burst spans the time it was measured over, so it is not held
  // as a gain too fast for the connector (nor is the rest of the session behind it).
  const verdict = applyRegister(track, r.energyWh, c.afterReboot, {
    atMs: r.receivedAtMs,
    takenAtMs: r.time.measuredAtMs,
    stampMs: r.time.stampMs,
    epoch: r.time.epoch,
    maxPowerW: c.maxPowerW,
  });
  if (verdict.kind === 'implausible' || verdict.kind === 'ignored') {
    return {
      kind: 'doubted',
      doubt: verdict,
      track,
      possibleWh: doubtedPossible(m, track, verdict, r, c),
      ...rebased,
    };
  }
  const possible = possibleAfter(m, track, verdict.kind, verdict.track, r, c);
  return { kind: 'counted', verdict: verdict.kind, track: verdict.track, ...possible, ...rebased };
}

/**
 * A first register a thousand times the start register (a 1.6 meterStart sent in kWh while its
 * samples are in Wh or carry their kWh unit): every gain would be held as impossible and the
 * session billed nothing. The start is read in kWh (kwhStartWh): the energy between it and this
 * register is counted like any gain. A start the edge rounded to a whole number without keeping
 * it as written proves nothing below this register: counted from here. Null: not this case.
 */
function kwhRebased(m: MeterState, energyWh: number): number | null {
  const t = m.track;
  const start = m.startWh ?? 0;
  const nothingCounted = t.lastWh === start && t.carriedWh === 0 && t.pendingResetWh === null;
  if (!nothingCounted || start <= 0 || energyWh < 999 * start || energyWh > 1_001 * start + 1_000)
    return null;
  return Math.min(energyWh, kwhStartWh(m.startUnrounded) ?? energyWh);
}

/**
 * A start register written in kWh with a decimal fraction, in Wh: the highest register it can
 * stand for (a charger may have rounded or cut the figure), so the energy counted from it is never
 * more than was delivered: 1234.567 kWh is 1,234,567 Wh, 1234.5 kWh at most 1,234,599 Wh.
 */
export function kwhStartWh(unrounded: number | null): number | null {
  if (unrounded === null) return null;
  const decimals = Math.min(3, String(unrounded).split('.')[1]?.length ?? 0);
  const stepWh = 10 ** (3 - decimals);
  return Math.round(unrounded * 1000) + stepWh - 1;
}

/**
 * What the session may have delivered after a counted reading. A register that dropped (held
 * until the next reading says whether it reset) says the charger runs: like a doubted reading,
 * it raises the possible energy by what the connector could deliver since the last counted
 * reading. Once the reset is confirmed, that doubt (or, when larger, the held register itself:
 * what the meter counted since it restarted) is a gap no reading will ever prove: it stays added
 * to the proven energy for the stop, so the new segment does not run past the paid energy by
 * that gap.
 */
function possibleAfter(
  m: MeterState,
  before: MeterTrack,
  kind: 'advanced' | 'reset' | 'reset_pending',
  after: MeterTrack,
  r: RegisterReading,
  c: Conditions,
): { possibleWh: number; gapWh: number } {
  const held = m.possibleWh ?? 0;
  let gapWh = m.gapWh;
  let doubtWh = 0;
  if (kind === 'reset_pending' && before.lastAtMs !== null) {
    // Read after a reboot, so measured after the last count: a clock that places it before
    // (stepped at the reboot) says nothing, and its arrival bounds it.
    const measuredAtMs =
      r.time.measuredAtMs > before.lastAtMs ? r.time.measuredAtMs : r.receivedAtMs;
    // Before any flow was measured, the held register (what the meter counted since it
    // restarted) is the estimate: the connector's power alone would stop it at once.
    doubtWh =
      c.rateWhPerMs === null
        ? Math.min(
            after.pendingResetWh ?? 0,
            maxGainWh(c.maxPowerW, before.lastAtMs, Math.max(before.lastAtMs, measuredAtMs)),
          )
        : doubtAtRate(c, before.lastAtMs, measuredAtMs);
  } else if (kind === 'reset') {
    // The held register is what the meter counted since it restarted (from about 0): energy
    // delivered, never proven, at most what the connector could deliver since the last count.
    const sinceReset =
      before.lastAtMs === null
        ? 0
        : Math.min(
            before.pendingResetWh ?? 0,
            maxGainWh(c.maxPowerW, before.lastAtMs, r.receivedAtMs),
          );
    gapWh += Math.max(held - deliveredWh(before) - gapWh, sinceReset, 0);
  } else if (kind === 'advanced' && before.pendingResetWh !== null && before.lastAtMs !== null) {
    // Back at or above the last register after a held drop: billed as a glitch (the smaller
    // energy), but a reset whose new segment already counted past the old register (a meter
    // that started near 0, a reboot early in the session) reads the same. When the gain from the
    // held register fits what the session was drawing since the last count, the stop is planned
    // on the reset: the doubt raised at the held reading and the old register stay a gap.
    const sinceHeldWh = after.lastWh - before.pendingResetWh;
    if (sinceHeldWh <= doubtAtRate(c, before.lastAtMs, r.receivedAtMs))
      gapWh +=
        Math.max(held - deliveredWh(before) - gapWh, 0) + before.lastWh - before.pendingResetWh;
  }
  const proven = deliveredWh(after);
  return { possibleWh: Math.max(held, proven + gapWh + doubtWh), gapWh };
}

/**
 * A reading that cannot be billed (a gain too fast for the connector, a register below the last)
 * still says the charger is running: when it was measured after the last counted one, the
 * session may have delivered up to what the connector could in the time since, and the stop is
 * planned on that. Counted only once a later reading (or the stop) proves it: never billed
 * unconfirmed. A reading measured before the last counted one is history and raises nothing.
 */
function doubtedPossible(
  m: MeterState,
  track: MeterTrack,
  doubt: Doubt,
  r: RegisterReading,
  c: Conditions,
): number | null {
  const since = track.lastAtMs;
  if (since === null || r.time.measuredAtMs <= since) return null;
  // A gain too fast for the connector claims more than it can deliver: the most it can. A lower
  // register claims nothing: the rate it was drawing at (at most the connector's power).
  const doubtWh =
    doubt.kind === 'implausible'
      ? maxGainWh(c.maxPowerW, since, r.time.measuredAtMs)
      : doubtAtRate(c, since, r.time.measuredAtMs);
  const possible = Math.max(m.possibleWh ?? 0, deliveredWh(track) + m.gapWh + doubtWh);
  return Number.isFinite(possible) ? possible : null;
}

/**
 * What a session may have delivered from `fromMs` to `toMs` that no reading shows: at the rate it
 * was measured drawing, at most what the connector can deliver (its power alone, before any rate
 * was measured). The connector's power alone would stop a 50 kW session on a 400 kW connector a
 * kilowatt-hour early for one doubted reading.
 */
function doubtAtRate(c: Conditions, fromMs: number, toMs: number): number {
  const atMost = maxGainWh(c.maxPowerW, fromMs, Math.max(fromMs, toMs));
  const rate = c.rateWhPerMs;
  return rate === null ? atMost : Math.min(atMost, Math.ceil(rate * Math.max(0, toMs - fromMs)));
}

/**
 * What the power a charger said it was drawing may have delivered where no register shows it:
 * before its first register (a 2.0.1 Started without a meter value, samples of power alone) or
 * between registers (samples that carry only power). Power is a reading at one instant, not a
 * count: it proves nothing and is never billed, but it is the charger's own word that energy flows
 * and how fast, so the stop is planned on it. The lifecycle keeps one trail per session, from its
 * last counted reading (or its start) to its last power reading; a counted register ends it.
 *
 * Between two power readings the higher one is taken (a ramp up or down delivered at most that),
 * before the first the first; never more than the connector can deliver in the time.
 */
export interface PowerTrail {
  /** When the trail starts: the last counted reading, or the transaction's start (our clock, ms). */
  fromMs: number;
  /** The last power reading's time (when it was measured, our clock) and its power. */
  atMs: number;
  powerW: number;
  /** What may have been delivered from `fromMs` to `atMs`. */
  wh: number;
}

const WH_PER_W_MS = 1 / 3_600_000;

/**
 * A reading of power alone, measured at `atMs`: the trail after it, and what the session may
 * have delivered with it. Null when it says nothing new (measured at or before the trail's last,
 * or no time to run from: `startedAtMs` is the transaction's start, for a session without a
 * start register).
 */
export function judgePower(
  m: MeterState,
  atMs: number,
  powerW: number,
  startedAtMs: number | null,
  c: Conditions,
): { trail: PowerTrail; possibleWh: number } | null {
  const fromMs = m.startWh === null ? startedAtMs : m.track.lastAtMs;
  if (fromMs === null || !Number.isFinite(fromMs)) return null;
  const trail = poweredTrail(c.power, fromMs, atMs, powerW, c.maxPowerW);
  if (!trail) return null;
  const proven = m.startWh === null ? 0 : provenWh(m) + m.gapWh;
  return { trail, possibleWh: Math.max(m.possibleWh ?? 0, proven + Math.ceil(trail.wh)) };
}

function poweredTrail(
  trail: PowerTrail | null,
  fromMs: number,
  atMs: number,
  powerW: number,
  maxPowerW: number,
): PowerTrail | null {
  const since = trail?.atMs ?? fromMs;
  if (atMs <= since || !Number.isFinite(powerW)) return null;
  const said = Math.max(0, powerW);
  const wh =
    (trail?.wh ?? 0) + Math.max(said, trail?.powerW ?? said) * (atMs - since) * WH_PER_W_MS;
  const origin = trail?.fromMs ?? fromMs;
  return {
    fromMs: origin,
    atMs,
    powerW: said,
    wh: Math.min(wh, maxGainWh(maxPowerW, origin, atMs)),
  };
}

/**
 * What the trail may have delivered by `atMs` (a register's time, at or after its last reading),
 * at the power said last or, when higher, `powerW` said with it: whole Wh, rounded up.
 */
function trailWhAt(
  trail: PowerTrail,
  atMs: number,
  powerW: number | null,
  maxPowerW: number,
): number {
  const next = poweredTrail(trail, trail.fromMs, atMs, powerW ?? trail.powerW, maxPowerW);
  return Math.ceil((next ?? trail).wh);
}
