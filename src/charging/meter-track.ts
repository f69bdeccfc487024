/**
 * Energy delivered in one transaction, from a charger register that may misbehave: samples that go
 * backwards, arrive late, or a register that resets when the charger reboots mid-session. Pure:
 * the lifecycle persists the track in the session row.
 *
 * The register is counted in segments. A reset starts a new segment and carries the energy of the
 * old one, so delivered energy is neither lost nor negative. Every rule errs towards the driver:
 * whatever cannot be proven from the charger's own register is not charged.
 */
export interface MeterTrack {
  /** Register at the start of the transaction. */
  startWh: number;
  /** Register where the current segment began (startWh until a reset). */
  segmentStartWh: number;
  /** Energy of the segments before the current one. */
  carriedWh: number;
  /** Highest register seen in the current segment. */
  lastWh: number;
}

export type RegisterVerdict =
  | { kind: 'advanced'; track: MeterTrack }
  | { kind: 'reset'; track: MeterTrack }
  | { kind: 'resumed'; track: MeterTrack }
  | { kind: 'ignored' };

export function deliveredWh(t: MeterTrack): number {
  return Math.max(0, t.carriedWh + t.lastWh - t.segmentStartWh);
}

/**
 * Applies a sampled register.
 * - At or above the last one: energy flowed.
 * - Below it right after the charger rebooted: the register reset; a new segment begins there.
 * - Below it otherwise: out of order or garbage; ignored (a register never runs backwards).
 * - After a reset, a register back at or above where the old one stood means the "reset" was a
 *   glitch (a meter that read 0 while booting): counting resumes on the original register.
 */
export function applyRegister(
  t: MeterTrack,
  registerWh: number,
  afterReboot: boolean,
): RegisterVerdict {
  if (t.carriedWh > 0 && registerWh >= t.startWh + t.carriedWh) {
    return {
      kind: 'resumed',
      track: { startWh: t.startWh, segmentStartWh: t.startWh, carriedWh: 0, lastWh: registerWh },
    };
  }
  if (registerWh >= t.lastWh) return { kind: 'advanced', track: { ...t, lastWh: registerWh } };
  if (!afterReboot) return { kind: 'ignored' };
  return {
    kind: 'reset',
    track: {
      startWh: t.startWh,
      segmentStartWh: registerWh,
      carriedWh: t.carriedWh + (t.lastWh - t.segmentStartWh),
      lastWh: registerWh,
    },
  };
}

/**
 * Energy to settle on, given the charger's stop register. A stop register inside the current
 * segment is the charger's final word (also when a little below the last sample: the lower figure
 * counts). One below the segment (reset, garbage) is not trusted: the last sampled register counts.
 */
export function deliveredAtStop(t: MeterTrack, stopWh: number | null): number {
  if (stopWh === null) return deliveredWh(t);
  if (t.carriedWh > 0 && stopWh >= t.startWh + t.carriedWh) return stopWh - t.startWh;
  if (stopWh >= t.segmentStartWh) return t.carriedWh + stopWh - t.segmentStartWh;
  return deliveredWh(t);
}
