import { maxGainWh } from './meter-track.js';

/**
 * What the power a charger said it was drawing may have delivered where no register shows it:
 * before its first register (a 2.0.1 Started without a meter value, samples of power alone) or
 * between registers (samples that carry only power). Power is a reading at one instant, not a
 * count: it proves nothing and is never billed, but it is the charger's own word that energy flows
 * and how fast, so the stop is planned on it (docs/meter-readings.md). Pure: the lifecycle keeps
 * one trail per session, from its last counted reading (or its start) to its last power reading.
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
 * The trail after a power reading measured at `atMs` (null: one measured at or before the trail's
 * last, which says nothing new).
 */
export function poweredTrail(
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
export function trailWhAt(
  trail: PowerTrail,
  atMs: number,
  powerW: number | null,
  maxPowerW: number,
): number {
  const next = poweredTrail(trail, trail.fromMs, atMs, powerW ?? trail.powerW, maxPowerW);
  return Math.ceil((next ?? trail).wh);
}
