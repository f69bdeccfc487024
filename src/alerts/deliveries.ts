import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import type { DeliveryState } from './delivery-words.js';

/**
 * Where one event stands with the webhook (docs/alerts.md, Delivery): `nextAttemptAt` is null
 * once it is delivered or given up; `waitingBehind` counts the undelivered events written before
 * it, which go first.
 */
export interface Delivery extends DeliveryState {
  createdAt: string;
}

type Row = Omit<Delivery, 'nextAttemptAt' | 'waitingBehind'> & {
  nextAttemptAt: string;
  alertId: string | null;
  seq: number;
};

const SELECT = `SELECT event_id AS eventId, json_extract(body, '$.type') AS type,
  created_at AS createdAt, attempts, last_error AS lastError, next_attempt_at AS nextAttemptAt,
  delivered_at AS deliveredAt, given_up_at AS givenUpAt, alert_id AS alertId, rowid AS seq
  FROM alert_deliveries`;

/** The webhook queue's rows as the operator reads them: each event's attempts and outcome. */
export class AlertDeliveries {
  private readonly byEventStmt: Statement<[string], Row>;
  private readonly byAlertStmt: Statement<[string], Row>;
  private readonly behindStmt: Statement<[number], { n: number }>;

  constructor(db: Db) {
    this.byEventStmt = db.prepare(`${SELECT} WHERE event_id = ?`);
    this.byAlertStmt = db.prepare(`${SELECT} WHERE alert_id = ? ORDER BY rowid`);
    this.behindStmt = db.prepare(
      `SELECT count(*) AS n FROM alert_deliveries INDEXED BY alert_deliveries_due
       WHERE delivered_at IS NULL AND given_up_at IS NULL AND rowid < ?`,
    );
  }

  get(eventId: string): Delivery | undefined {
    const row = this.byEventStmt.get(eventId);
    return row ? this.stateOf(row) : undefined;
  }

  /** An alert's events (raised, then cleared), oldest first; none without a webhook. */
  ofAlert(alertId: string): Delivery[] {
    return this.byAlertStmt.all(alertId).map((row) => this.stateOf(row));
  }

  private stateOf(row: Row): Delivery {
    const waiting = row.deliveredAt === null && row.givenUpAt === null;
    return {
      eventId: row.eventId,
      type: row.type,
      createdAt: row.createdAt,
      attempts: row.attempts,
      lastError: row.lastError,
      nextAttemptAt: waiting ? row.nextAttemptAt : null,
      deliveredAt: row.deliveredAt,
      givenUpAt: row.givenUpAt,
      waitingBehind: waiting ? (this.behindStmt.get(row.seq)?.n ?? 0) : 0,
    };
  }
}
