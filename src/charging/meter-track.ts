/**
 * Energy delivered in one transaction, from a charger register that may misbehave: samples that go
 * backwards, arrive late, or a register that resets when the charger reboots mid-session. Pure:
 * the lifecycle persists the track in the session row.
 *
 * The register is counted in segments. A reset starts a new segment and carries the energy of the
 * old one, so delivered energy is neither lost nor negative. Every rule errs towards the driver:
 * whatever cannot be proven from the charger's own register is not charged
 * (test/meter-track.test.ts checks it for random registers).
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
}

export type RegisterVerdict =
  { kind: 'advanced' | 'reset' | 'reset_pending'; track: MeterTrack } | { kind: 'ignored' };

export function deliveredWh(t: MeterTrack): number {
  return Math.max(0, t.carriedWh + t.lastWh - t.segmentStartWh);
}

/**
 * Applies a sampled register.
 * - Below the last one right after the charger rebooted: perhaps a reset, perhaps a meter reading
 *   0 while it boots. It is held until the next sample says which.
 * - The next sample at or above the last one: it was a glitch; counting goes on as before.
 * - The next sample below the last one but not below the held one: the register did reset; a new
 *   segment counts from the held register. (The energy between the last sample before the reboot
 *   and the first after it is not proven and not charged.)
 * - At or above the last one otherwise: energy flowed.
 * - Below it otherwise: out of order or garbage; ignored (a register never runs backwards).
 */
export function applyRegister(
  t: MeterTrack,
  registerWh: number,
  afterReboot: boolean,
): RegisterVerdict {
  if (afterReboot && registerWh < t.lastWh) {
    return { kind: 'reset_pending', track: { ...t, pendingResetWh: registerWh } };
  }
  if (registerWh >= t.lastWh) {
    return { kind: 'advanced', track: { ...t, lastWh: registerWh, pendingResetWh: null } };
  }
  if (t.pendingResetWh === null || registerWh < t.pendingResetWh) return { kind: 'ignored' };
  return {
    kind: 'reset',
    track: {
      carriedWh: deliveredWh(t),
      segmentStartWh: t.pendingResetWh,
      lastWh: registerWh,
      pendingResetWh: null,
    },
  };
}

/**
 * Energy to settle on, given the charger's stop register, by the same rules as a sample: a stop
 * register inside the current segment is the charger's final word (also a little below the last
 * sample: the lower figure counts); one that confirms a held reset counts from it; one below
 * both (a reset after the last sample, garbage) is not trusted: the last sampled register counts.
 */
export function deliveredAtStop(t: MeterTrack, stopWh: number | null): number {
  if (stopWh === null) return deliveredWh(t);
  if (t.pendingResetWh !== null && stopWh < t.lastWh && stopWh >= t.pendingResetWh)
    return deliveredWh(t) + stopWh - t.pendingResetWh;
  if (stopWh >= t.segmentStartWh) return t.carriedWh + stopWh - t.segmentStartWh;
  return deliveredWh(t);
}
