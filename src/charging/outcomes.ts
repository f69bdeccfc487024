import { atomic } from '../store/atomic.js';
import type { Db } from '../store/database.js';
import type { Outbox } from '../store/outbox.js';
import { settle } from '../pricing/money.js';
import { killPoint } from '../shared/kill-points.js';
import type { Wallet } from '../wallet/wallet.js';
import type { Session, SessionState, SessionStore } from './session-store.js';
import type { StopLine } from './stop-line.js';

/**
 * What a session event names; a new session's fields suffice, no read-back needed. `origin`: a
 * card's or vehicle's session says so in every event (absent: the app's).
 */
export type SessionIdentity = Pick<
  Session,
  'id' | 'driverId' | 'chargerId' | 'connectorId' | 'amount'
> &
  Partial<Pick<Session, 'origin'>>;

/**
 * The two ways a debit ends, each one SQLite transaction that writes the ledger entry, the session
 * row and the outbox event together. Both are no-ops for a session that already has its outcome,
 * so a repeated stop message or a late timer cannot settle or refund twice.
 */
export class SessionOutcomes {
  constructor(
    private readonly db: Db,
    private readonly sessions: SessionStore,
    private readonly wallet: Wallet,
    private readonly outbox: Outbox,
  ) {}

  /** Full refund of a session that never started charging. Returns false if it had moved on. */
  refund(sessionId: string, reason: string, at: string): boolean {
    const refunded = atomic(this.db, () => {
      const session = this.sessions.get(sessionId);
      if (!session || (session.state !== 'authorizing' && session.state !== 'authorized'))
        return false;
      this.wallet.refundSession(session.driverId, session.id, at);
      this.sessions.markRefunded(session.id, reason, at);
      this.event(session, 'refunded', at, { reason, refunded: session.amount });
      killPoint('refund.uncommitted');
      return true;
    });
    if (refunded) killPoint('refund.committed');
    return refunded;
  }

  /**
   * Settles a session from the energy the charger delivered; cost is capped at what was paid.
   * `session` is the row as the caller read it in this same synchronous turn (nothing else can
   * have written it since), so it is not read again; the settling UPDATE still checks its state,
   * and a row that moved on rolls the credit back with it.
   */
  settle(
    session: Session,
    deliveredWh: number,
    reason: string,
    at: string,
    stop: { line: StopLine; gapWh: number | null },
  ): boolean {
    if (session.state !== 'charging' && session.state !== 'stopping') return false;
    return atomic(this.db, () => {
      const figures = settle(session.amount, deliveredWh, session.microNgnPerWh);
      this.wallet.creditSessionShortfall(session.driverId, session.id, figures.credit, at);
      const settled = this.sessions.markSettled(session.id, {
        deliveredWh,
        cost: figures.cost,
        credited: figures.credit,
        reason,
        at,
        stopLine: stop.line,
        stopLineGapWh: stop.gapWh,
      });
      if (!settled) throw new Error(`session ${session.id} is no longer ${session.state}`);
      this.event(session, 'settled', at, {
        reason,
        deliveredWh,
        cost: figures.cost,
        credited: figures.credit,
        stopLine: stop.line,
      });
      killPoint('settle.uncommitted');
      return true;
    });
  }

  event(
    session: SessionIdentity,
    state: SessionState,
    at: string,
    detail: Record<string, unknown> = {},
  ): void {
    this.outbox.enqueue(
      'sessions',
      {
        type: 'session_state',
        sessionId: session.id,
        driverId: session.driverId,
        chargerId: session.chargerId,
        connectorId: session.connectorId,
        state,
        amount: session.amount,
        ...(session.origin !== undefined && session.origin !== 'app' && { origin: session.origin }),
        at,
        ...detail,
      },
      at,
    );
  }
}
