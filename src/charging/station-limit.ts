import type { TokenVerdict } from '../ocpp/port.js';
import type { Session } from './session-store.js';

/**
 * An accepted paid start's verdict with what the session may draw (its paid energy and the
 * amount paid) and its price, for a charger that holds the limit and computes the cost itself
 * (OCPP 2.1; the other protocols ignore both). The paid energy is fixed at the Start: a top-up
 * does not extend a running session (docs/money.md).
 */
export function withPaidLimit(verdict: TokenVerdict, s: Session): TokenVerdict {
  return {
    ...verdict,
    limit: { energyWh: s.limitWh, costNgn: s.amount },
    tariff: { tariffId: s.tariffRef ?? `session:${s.id}`, microNgnPerWh: s.microNgnPerWh },
  };
}
