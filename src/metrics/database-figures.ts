import { SESSION_STATES } from '../charging/session-store.js';
import { STOP_LINES } from '../charging/stop-line.js';
import type { Db } from '../store/database.js';

type Labelled = { labels: Record<string, string>; value: number }[];

/**
 * Figures read from the database at scrape time: authoritative, and the same after a restart.
 * Tables other modules add (charger_deviations, operator_losses, stop_attempts) are read when
 * they exist, so each figure appears as soon as its table does.
 */
export class DatabaseFigures {
  private readonly tableExists;

  constructor(private readonly db: Db) {
    this.tableExists = db.prepare<[string], { n: number }>(
      "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?",
    );
  }

  private has(table: string): boolean {
    return (this.tableExists.get(table)?.n ?? 0) > 0;
  }

  private rows<R>(sql: string): R[] {
    return this.db.prepare<[], R>(sql).all();
  }

  sessionsByState(): Labelled {
    const counts = new Map(
      this.rows<{ state: string; n: number }>(
        'SELECT state, count(*) AS n FROM sessions GROUP BY state',
      ).map((r) => [r.state, r.n]),
    );
    return SESSION_STATES.map((state) => ({ labels: { state }, value: counts.get(state) ?? 0 }));
  }

  /** Sessions whose transaction started, by how: the app, a card or a vehicle (taps). */
  startedByOrigin(): Labelled {
    const counts = new Map(
      this.rows<{ origin: string; n: number }>(
        'SELECT origin, count(*) AS n FROM sessions WHERE started_at IS NOT NULL GROUP BY origin',
      ).map((r) => [r.origin, r.n]),
    );
    return ['app', 'card', 'vehicle'].map((origin) => ({
      labels: { origin },
      value: counts.get(origin) ?? 0,
    }));
  }

  /** Settled sessions by the line that stopped them (charging/stop-line.ts). */
  stoppedByLine(): Labelled {
    const counts = new Map(
      this.rows<{ line: string; n: number }>(
        'SELECT stop_line AS line, count(*) AS n FROM sessions WHERE stop_line IS NOT NULL GROUP BY stop_line',
      ).map((r) => [r.line, r.n]),
    );
    return STOP_LINES.map((line) => ({ labels: { line }, value: counts.get(line) ?? 0 }));
  }

  /**
   * Every debited Start by what became of it: `accepted` (the charger took it), the refund reason
   * when it was refunded without ever being accepted, or `pending` while the charger is asked.
   */
  startOutcomes(): Labelled {
    return this.rows<{ outcome: string; n: number }>(
      `SELECT CASE
         WHEN authorized_at IS NOT NULL OR state IN ('charging', 'stopping', 'settled') THEN 'accepted'
         WHEN state = 'refunded' THEN coalesce(end_reason, 'refunded')
         ELSE 'pending' END AS outcome, count(*) AS n
       FROM sessions GROUP BY outcome`,
    ).map((r) => ({ labels: { outcome: r.outcome }, value: r.n }));
  }

  /** Settled sessions: energy delivered, energy within what was paid, energy beyond it, money. */
  settled(): {
    deliveredWh: number;
    paidWh: number;
    overshootWh: number;
    chargedNgn: number;
    creditedNgn: number;
  } {
    const row = this.db
      .prepare<
        [],
        { delivered: number; paid: number; overshoot: number; charged: number; credited: number }
      >(
        `SELECT coalesce(sum(delivered_wh), 0) AS delivered,
           coalesce(sum(min(delivered_wh, limit_wh)), 0) AS paid,
           coalesce(sum(max(delivered_wh - limit_wh, 0)), 0) AS overshoot,
           coalesce(sum(cost), 0) AS charged, coalesce(sum(credited), 0) AS credited
         FROM sessions WHERE state = 'settled'`,
      )
      .get();
    return {
      deliveredWh: row?.delivered ?? 0,
      paidWh: row?.paid ?? 0,
      overshootWh: row?.overshoot ?? 0,
      chargedNgn: row?.charged ?? 0,
      creditedNgn: row?.credited ?? 0,
    };
  }

  refundedNgn(): number {
    return (
      this.db
        .prepare<[], { n: number }>(
          "SELECT coalesce(sum(amount), 0) AS n FROM sessions WHERE state = 'refunded'",
        )
        .get()?.n ?? 0
    );
  }

  /** Energy the operator delivered and cannot bill, by reason (field-session's operator_losses). */
  operatorLosses(): { wh: Labelled; ngn: Labelled } | null {
    if (!this.has('operator_losses')) return null;
    const rows = this.rows<{ reason: string; wh: number; micro: number }>(
      `SELECT l.reason AS reason, sum(l.wh) AS wh, sum(l.wh * s.price_micro_ngn_per_wh) AS micro
       FROM operator_losses l JOIN sessions s ON s.id = l.session_id GROUP BY l.reason`,
    );
    return {
      wh: rows.map((r) => ({ labels: { reason: r.reason }, value: r.wh })),
      ngn: rows.map((r) => ({ labels: { reason: r.reason }, value: r.micro / 1_000_000 })),
    };
  }

  /**
   * Stops sent (field-session's stop_attempts) by step and reply; retries are remote stops after
   * a session's first, escalations every step beyond the remote stop.
   */
  stopAttempts(): { attempts: Labelled; retries: number; escalations: number } | null {
    if (!this.has('stop_attempts')) return null;
    const attempts = this.rows<{ step: string; reply: string; n: number }>(
      'SELECT step, reply, count(*) AS n FROM stop_attempts GROUP BY step, reply',
    ).map((r) => ({ labels: { step: r.step, reply: r.reply }, value: r.n }));
    const row = this.db
      .prepare<[], { retries: number; escalations: number }>(
        `SELECT
           (SELECT count(*) - count(DISTINCT session_id) FROM stop_attempts WHERE step = 'remote_stop') AS retries,
           (SELECT count(*) FROM stop_attempts WHERE step <> 'remote_stop') AS escalations`,
      )
      .get();
    return { attempts, retries: row?.retries ?? 0, escalations: row?.escalations ?? 0 };
  }

  /** Deviations from the OCPP schemas the edge tolerated (field-edge's charger_deviations). */
  deviations(): Labelled | null {
    if (!this.has('charger_deviations')) return null;
    return this.rows<{ kind: string; n: number }>(
      'SELECT kind, sum(count) AS n FROM charger_deviations GROUP BY kind',
    ).map((r) => ({ labels: { kind: r.kind }, value: r.n }));
  }

  /** Connectors an operator took out of service (operator_availability). */
  outOfService(): number {
    return (
      this.db
        .prepare<[], { n: number }>(
          'SELECT count(*) AS n FROM operator_availability WHERE operative = 0',
        )
        .get()?.n ?? 0
    );
  }
}
