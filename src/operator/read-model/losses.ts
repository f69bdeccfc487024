import type { Statement } from 'better-sqlite3';
import type { SessionView } from '../../charging/session-view.js';
import { costDown } from '../../pricing/money.js';
import type { Db } from '../../store/database.js';
import type { SessionFilter, SessionReads } from './sessions.js';

/** Energy given away in a session: beyond what was paid for, valued at the session's price. */
export interface SessionLoss {
  sessionId: string;
  chargerId: string;
  state: string;
  paidEnergyWh: number;
  energyWh: number;
  /** Delivered beyond the energy the amount paid for (the stop came late). */
  beyondPaidWh: number;
  /** What that energy would have cost: the operator's loss. */
  beyondPaidNgn: number;
  /**
   * What the stop assurance recorded as the operator's loss (operator_losses), Wh by reason:
   * beyond the paid energy, proven by a stop that came after a settlement without one, and what
   * the session may have delivered beyond what its readings proved (docs/money.md).
   */
  recorded: { beyondPaidWh: number; afterSettlementWh: number; unprovenWh: number } | null;
}

/** The operator's losses: energy given away beyond what was paid. */
export class LossReads {
  private recordedLossStmt: Statement | undefined;

  constructor(
    private readonly db: Db,
    private readonly sessions: SessionReads,
  ) {}

  /**
   * The operator's losses, per settled session: energy delivered beyond what was paid (from the
   * session's registers), with what the stop assurance recorded for it in operator_losses (also
   * energy a late stop proved after the session was settled without one).
   */
  all(f: SessionFilter): {
    sessions: SessionLoss[];
    beyondPaidWh: number;
    beyondPaidNgn: number;
  } {
    const sessions: SessionLoss[] = [];
    let wh = 0;
    let ngn = 0;
    for (const page of this.sessions.all({ ...f, states: ['settled'] })) {
      for (const s of page) {
        const loss = this.ofSession(s);
        if (!loss) continue;
        wh += loss.beyondPaidWh;
        ngn += loss.beyondPaidNgn;
        sessions.push(loss);
      }
    }
    return { sessions, beyondPaidWh: wh, beyondPaidNgn: ngn };
  }

  /**
   * A settled session's loss to the operator (energy beyond what was paid, and what the stop
   * assurance recorded), or null when it has none or is not settled.
   */
  ofSession(s: SessionView): SessionLoss | null {
    if (s.state !== 'settled') return null;
    this.recordedLossStmt ??= this.db.prepare(
      `SELECT coalesce(sum(wh) FILTER (WHERE reason = 'beyond_paid'), 0) AS beyondPaidWh,
              coalesce(sum(wh) FILTER (WHERE reason = 'after_settlement'), 0) AS afterSettlementWh,
              coalesce(sum(wh) FILTER (WHERE reason = 'unproven'), 0) AS unprovenWh,
              count(*) AS n
       FROM operator_losses WHERE session_id = ?`,
    );
    const r = this.recordedLossStmt.get(s.sessionId) as {
      beyondPaidWh: number;
      afterSettlementWh: number;
      unprovenWh: number;
      n: number;
    };
    const paid = s.paidEnergyWh;
    const beyondPaidWh = Math.max(0, s.energyWh - paid);
    const recorded =
      r.n > 0
        ? {
            beyondPaidWh: r.beyondPaidWh,
            afterSettlementWh: r.afterSettlementWh,
            unprovenWh: r.unprovenWh,
          }
        : null;
    if (beyondPaidWh === 0 && !recorded) return null;
    return {
      sessionId: s.sessionId,
      chargerId: s.chargerId,
      state: s.state,
      paidEnergyWh: paid,
      energyWh: s.energyWh,
      beyondPaidWh,
      beyondPaidNgn: costDown(beyondPaidWh, Math.round(s.pricePerKwh * 1000)),
      recorded,
    };
  }
}
