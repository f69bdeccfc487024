import type { SessionView } from '../charging/session-view.js';

/** Who asked the gateway to stop a session, as session_stop_requests holds it. */
export interface StopAskerRow {
  origin: 'paid_energy' | 'operator';
  operatorId: string | null;
  operatorName: string | null;
}

export type StopperKind = 'operator' | 'paid_energy' | 'driver' | 'ev' | 'charger' | 'gateway';

export interface StoppedBy {
  by: StopperKind;
  operatorId: string | null;
  operatorName: string | null;
  /** The end reason it was read from: the charger's word, or the gateway's `no_stop_*`. */
  reason: string | null;
  words: string;
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
export function stoppedBy(s: SessionView, asked: StopAskerRow | undefined): StoppedBy | null {
  const reason = s.endReason;
  if (asked?.origin === 'operator') {
    return {
      by: 'operator',
      operatorId: asked.operatorId,
      operatorName: asked.operatorName,
      reason,
      words: `operator ${asked.operatorName ?? ''} (${asked.operatorId ?? ''})`,
    };
  }
  const who = (by: StopperKind, words: string): StoppedBy => ({
    by,
    operatorId: null,
    operatorName: null,
    reason,
    words,
  });
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
