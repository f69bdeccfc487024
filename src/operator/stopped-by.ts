import type { SessionView } from '../charging/session-view.js';
import type { StopLine } from '../charging/stop-line.js';

/** Who asked the gateway to stop a session, as session_stop_requests holds it. */
export interface StopAskerRow {
  origin: 'paid_energy' | 'operator';
  operatorId: string | null;
  operatorName: string | null;
}

export type StopperKind = StopLine;

/** The line kept with the session at its settlement (charging/stop-line.ts); null before it. */
export interface KeptLine {
  line: StopLine | null;
  /** The station's limit ended it: energy delivered less the paid energy (negative: short). */
  gapWh: number | null;
}

export interface StoppedBy {
  by: StopperKind;
  operatorId: string | null;
  operatorName: string | null;
  /** The end reason it was read from: the charger's word, or the gateway's `no_stop_*`. */
  reason: string | null;
  words: string;
  /** The line kept at settlement; null for a session settled before it was kept, or open. */
  line: StopLine | null;
  gapWh: number | null;
}

/** The charger's end reasons (1.6 Reason, 2.0.1 ReasonEnumType) that name the driver or the EV. */
const DRIVER_REASONS: Record<string, string> = {
  Local: 'the driver, at the charger',
  EVDisconnected: 'the driver, by unplugging',
};
const EV_REASONS = new Set(['StoppedByEV', 'SOCLimitReached']);
const GATEWAY_REASONS: Record<string, string> = {
  no_stop_silence: 'the charger went silent; settled on its last register',
  no_stop_charger_ended: 'the charger said the transaction was over without a stop message',
  no_stop_connector_available: 'the connector came back Available without a stop message',
};

/**
 * Who stopped a session: whoever asked the gateway to (an operator, the paid energy), else what
 * the end reason says (the driver, the EV, the charger itself, the gateway settling without a
 * stop). Null while the session runs unasked, and for a refunded one (it never charged).
 */
export function stoppedBy(
  s: SessionView,
  asked: StopAskerRow | undefined,
  kept: KeptLine = { line: null, gapWh: null },
): StoppedBy | null {
  const reason = s.endReason;
  if (asked?.origin === 'operator') {
    return {
      by: 'operator',
      operatorId: asked.operatorId,
      operatorName: asked.operatorName,
      reason,
      words: `operator ${asked.operatorName ?? ''} (${asked.operatorId ?? ''})`,
      ...kept,
    };
  }
  const who = (by: StopperKind, words: string): StoppedBy => ({
    by,
    operatorId: null,
    operatorName: null,
    reason,
    words,
    ...kept,
  });
  if (kept.line === 'station_limit') {
    const gap = kept.gapWh ?? 0;
    const against =
      gap === 0
        ? 'at the paid energy'
        : `${Math.abs(gap)} Wh ${gap > 0 ? 'past' : 'short of'} the paid energy`;
    return who('station_limit', `the charger's own limit (${reason ?? ''}), ${against}`);
  }
  if (asked?.origin === 'paid_energy') return who('paid_energy', 'the paid-energy limit');
  if (s.stopRequestedAt !== null) {
    return who('gateway', 'a stop the gateway sent, from before who asked was recorded');
  }
  if (s.state !== 'settled' || reason === null) return null;
  const driver = DRIVER_REASONS[reason];
  if (driver) return who('driver', driver);
  if (EV_REASONS.has(reason)) return who('ev', `the EV (${reason})`);
  const gateway = GATEWAY_REASONS[reason];
  if (gateway) return who('gateway', `the gateway: ${gateway}`);
  return who('charger', `the charger (${reason})`);
}
