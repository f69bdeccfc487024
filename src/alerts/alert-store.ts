import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import type { Outbox } from '../store/outbox.js';
import { uuid7 } from '../shared/uuid7.js';
import type { Alert, AlertEvent, AlertKind, AlertTestEvent } from './alert.js';

export type AlertState = 'open' | 'closed' | 'all';

interface Row {
  id: string;
  kind: AlertKind;
  subject: string;
  raised_at: string;
  cleared_at: string | null;
  detail: string;
  acknowledged_at: string | null;
  acknowledged_by: string | null;
}

const COLUMNS =
  'id, kind, subject, raised_at, cleared_at, detail, acknowledged_at, acknowledged_by';

function alertOf(row: Row): Alert {
  return {
    id: row.id,
    kind: row.kind,
    subject: row.subject,
    raisedAt: row.raised_at,
    clearedAt: row.cleared_at,
    detail: JSON.parse(row.detail) as Record<string, unknown>,
    acknowledgedAt: row.acknowledged_at,
    acknowledgedBy: row.acknowledged_by,
  };
}

/**
 * The alerts table and the events it sends. A raise or a clear, its outbox row (the MQTT alert
 * topic) and its webhook row are one transaction: every event is sent at least once, with the
 * same id on both paths, whatever crashes after.
 */
export class AlertStore {
  private readonly insertStmt: Statement<[string, string, string, string, string]>;
  private readonly clearStmt: Statement<[string, string]>;
  private readonly byIdStmt: Statement<[string], Row>;
  private readonly openStmt: Statement<[], Row>;
  private readonly everStmt: Statement<[string, string], { n: number }>;
  private readonly ackStmt: Statement<[string, string, string]>;
  private readonly countStmt: Statement<[], { n: number }>;
  private readonly deliveryStmt: Statement<[string, string | null, string, string, string]>;
  private readonly undeliveredStmt: Statement<[], { n: number }>;
  private readonly listeners: ((event: AlertEvent) => void)[] = [];
  private readonly queuedListeners: (() => void)[] = [];

  constructor(
    private readonly db: Db,
    private readonly outbox: Outbox,
    private readonly siteId: string,
    /** Whether a webhook is configured: without one no delivery row is written. */
    private readonly webhook: boolean,
  ) {
    this.insertStmt = db.prepare(
      'INSERT INTO alerts (id, kind, subject, raised_at, detail) VALUES (?, ?, ?, ?, ?)',
    );
    this.clearStmt = db.prepare(
      'UPDATE alerts SET cleared_at = ? WHERE id = ? AND cleared_at IS NULL',
    );
    this.byIdStmt = db.prepare(`SELECT ${COLUMNS} FROM alerts WHERE id = ?`);
    this.openStmt = db.prepare(
      `SELECT ${COLUMNS} FROM alerts WHERE cleared_at IS NULL ORDER BY raised_at`,
    );
    this.everStmt = db.prepare('SELECT count(*) AS n FROM alerts WHERE kind = ? AND subject = ?');
    this.ackStmt = db.prepare(
      `UPDATE alerts SET acknowledged_at = ?, acknowledged_by = ?
       WHERE id = ? AND acknowledged_at IS NULL`,
    );
    this.countStmt = db.prepare('SELECT count(*) AS n FROM alerts WHERE cleared_at IS NULL');
    this.undeliveredStmt = db.prepare(
      `SELECT count(*) AS n FROM alert_deliveries
       WHERE delivered_at IS NULL AND given_up_at IS NULL`,
    );
    this.deliveryStmt = db.prepare(
      `INSERT INTO alert_deliveries (event_id, alert_id, body, created_at, next_attempt_at)
       VALUES (?, ?, ?, ?, ?)`,
    );
  }

  /** Hears each alert event written (the console), after the statement, not the commit. */
  onEvent(listener: (event: AlertEvent) => void): void {
    this.listeners.push(listener);
  }

  /** Hears each webhook row written (the sender), after the statement, not the commit. */
  onQueued(listener: () => void): void {
    this.queuedListeners.push(listener);
  }

  /** Whether events go to a webhook (`alerts.webhook`). */
  get hasWebhook(): boolean {
    return this.webhook;
  }

  open(): Alert[] {
    return this.openStmt.all().map(alertOf);
  }

  openCount(): number {
    return this.countStmt.get()?.n ?? 0;
  }

  /** Webhook events neither delivered nor given up. */
  undelivered(): number {
    return this.undeliveredStmt.get()?.n ?? 0;
  }

  get(id: string): Alert | undefined {
    const row = this.byIdStmt.get(id);
    return row ? alertOf(row) : undefined;
  }

  /** Whether this kind was ever raised for this subject (kinds raised once per subject ever). */
  everRaised(kind: AlertKind, subject: string): boolean {
    return (this.everStmt.get(kind, subject)?.n ?? 0) > 0;
  }

  /** Newest first; `before` (a raisedAt) pages on. */
  list(state: AlertState, limit: number, before?: string): Alert[] {
    const where: string[] = [];
    if (state === 'open') where.push('cleared_at IS NULL');
    if (state === 'closed') where.push('cleared_at IS NOT NULL');
    if (before !== undefined) where.push('raised_at < @before');
    const sql = `SELECT ${COLUMNS} FROM alerts ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY raised_at DESC, id DESC LIMIT @limit`;
    return this.db
      .prepare<{ before?: string; limit: number }, Row>(sql)
      .all(before === undefined ? { limit } : { before, limit })
      .map(alertOf);
  }

  raise(kind: AlertKind, subject: string, detail: Record<string, unknown>, at: string): Alert {
    const alert = this.db.transaction(() => {
      const id = uuid7();
      this.insertStmt.run(id, kind, subject, at, JSON.stringify(detail));
      const raised = alertOf(this.byIdStmt.get(id) as Row);
      this.send('alert.raised', raised, at);
      return raised;
    })();
    return alert;
  }

  /** Clears an open alert; false when it was cleared already. */
  clear(id: string, at: string): boolean {
    return this.db.transaction(() => {
      if (this.clearStmt.run(at, id).changes === 0) return false;
      this.send('alert.cleared', alertOf(this.byIdStmt.get(id) as Row), at);
      return true;
    })();
  }

  /** Marks an alert seen by an operator; false when it was acknowledged already. */
  acknowledge(id: string, operatorName: string, at: string): boolean {
    return this.ackStmt.run(at, operatorName, id).changes > 0;
  }

  /**
   * Queues a test event for the webhook, behind whatever waits (the real path: queue, signature,
   * retries); not on MQTT, where it would be a message the cloud does not know. Its id, or null
   * without a webhook.
   */
  sendTest(requestedBy: string, at: string): string | null {
    if (!this.webhook) return null;
    const body: AlertTestEvent = {
      id: uuid7(),
      type: 'alert.test',
      siteId: this.siteId,
      at,
      requestedBy,
    };
    this.deliveryStmt.run(body.id, null, JSON.stringify(body), at, at);
    for (const listener of this.queuedListeners) listener();
    return body.id;
  }

  private send(type: AlertEvent['type'], alert: Alert, at: string): void {
    const event = { type, siteId: this.siteId, at, alert };
    const id = this.outbox.enqueue('alerts', event, at);
    const body: AlertEvent = { id, ...event };
    if (this.webhook) {
      this.deliveryStmt.run(id, alert.id, JSON.stringify(body), at, at);
      for (const listener of this.queuedListeners) listener();
    }
    for (const listener of this.listeners) listener(body);
  }
}
