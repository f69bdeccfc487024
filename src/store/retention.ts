import type { Statement } from 'better-sqlite3';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Db } from './database.js';
import { clearUnrefTimer } from '../shared/unref-timer.js';

/** How long each kind of row that only grows is kept, in days; 0 keeps it forever. */
export interface RetentionWindows {
  ocppEventsDays: number;
  transactionEventsDays: number;
  idempotencyKeysDays: number;
  uplinkCommandsDays: number;
  alertsDays: number;
  alertDeliveriesDays: number;
}

export interface RetentionOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  windows: RetentionWindows;
  /** Rows deleted per table per batch: one short transaction, so the event loop never waits long. */
  batchRows: number;
  intervalMs: number;
}

export type PrunedCounts = Record<keyof RetentionWindows, number>;

const DAY_MS = 86_400_000;

const noneYet = (): PrunedCounts => ({
  ocppEventsDays: 0,
  transactionEventsDays: 0,
  idempotencyKeysDays: 0,
  uplinkCommandsDays: 0,
  alertsDays: 0,
  alertDeliveriesDays: 0,
});

/**
 * 2.0.1 events past their window, walked in arrival order (migrations/034): the walk stops at the
 * first event received at or after the window's start, so no index on received_at is written
 * with every sample. The newest event is never deleted, so event ids only grow and each
 * transaction's span of ids stays true (src/ocpp/v201/transactions.ts). An open session's events
 * are skipped (and refused by the schema, migrations/031 to 034). Events keep their received time
 * in ms (migrations/032): the window's start is given as ISO text like every other table's.
 * test/retention.test.ts holds the plan.
 */
export const PRUNE_TRANSACTION_EVENTS = `WITH cut(ms) AS
     (SELECT CAST(round(unixepoch(?, 'subsec') * 1000) AS INTEGER)),
   upto(event_id) AS (SELECT coalesce(
     (SELECT e.event_id FROM ocpp201_transaction_events e, cut
       WHERE e.received_at_ms >= cut.ms ORDER BY e.event_id LIMIT 1),
     (SELECT max(event_id) FROM ocpp201_transaction_events)))
   DELETE FROM ocpp201_transaction_events WHERE event_id IN
     (SELECT e.event_id FROM ocpp201_transaction_events e
       WHERE e.event_id < (SELECT event_id FROM upto)
         AND NOT EXISTS (
         SELECT 1 FROM ocpp201_transactions t JOIN sessions s
           ON s.charger_id = t.charger_id AND s.transaction_ref = t.transaction_id
         WHERE t.tx_key = e.tx_key
           AND s.state IN ('authorizing', 'authorized', 'charging', 'stopping'))
       ORDER BY e.event_id LIMIT ?)`;

/**
 * Deletes rows past their window, in bounded batches. What it may delete is what only serves
 * diagnosis or deduplication for a while; it never touches money rows (ledger, sessions, wallets:
 * their triggers refuse anyway) nor what an open session needs: the idempotency key of a session
 * that is not settled or refunded, and the transaction events of an open session (the schema
 * refuses both too, see migrations/008-operations.ts and 031). Sent outbox rows are pruned by the uplink's outbox
 * monitor (uplink.outbox.sentRetentionHours); unsent ones never are. Alerts go once cleared
 * longer ago than their window, except those about a session (stop_escalated, operator_loss:
 * raised once ever, known raised by their row); webhook events once delivered or given up longer
 * ago than theirs, never while they wait (the schema refuses both, see
 * migrations/025-alert-retention.ts).
 */
export class Retention {
  private readonly statements: Record<keyof RetentionWindows, Statement<[string, number]>>;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly o: RetentionOptions) {
    const { db } = o;
    this.statements = {
      ocppEventsDays: db.prepare(
        `DELETE FROM ocpp_events WHERE seq IN
           (SELECT seq FROM ocpp_events WHERE at < ? ORDER BY at LIMIT ?)`,
      ),
      transactionEventsDays: db.prepare(PRUNE_TRANSACTION_EVENTS),
      idempotencyKeysDays: db.prepare(
        `DELETE FROM idempotency_keys WHERE rowid IN
           (SELECT k.rowid FROM idempotency_keys k JOIN sessions s ON s.id = k.session_id
             WHERE k.created_at < ? AND s.state IN ('settled', 'refunded')
             ORDER BY k.created_at LIMIT ?)`,
      ),
      uplinkCommandsDays: db.prepare(
        `DELETE FROM uplink_commands WHERE rowid IN
           (SELECT rowid FROM uplink_commands WHERE applied_at < ? ORDER BY applied_at LIMIT ?)`,
      ),
      alertsDays: db.prepare(
        `DELETE FROM alerts WHERE rowid IN
           (SELECT rowid FROM alerts WHERE cleared_at < ?
              AND kind NOT IN ('stop_escalated', 'operator_loss')
            ORDER BY cleared_at LIMIT ?)`,
      ),
      alertDeliveriesDays: db.prepare(
        `DELETE FROM alert_deliveries WHERE rowid IN
           (SELECT rowid FROM alert_deliveries
             WHERE coalesce(delivered_at, given_up_at) < ?
               AND (delivered_at IS NOT NULL OR given_up_at IS NOT NULL)
             ORDER BY coalesce(delivered_at, given_up_at) LIMIT ?)`,
      ),
    };
  }

  /**
   * One batch per table: deletes at most `batchRows` rows of each, each table in its own short
   * transaction. Returns how many went; a table that filled its batch may have more.
   */
  pruneBatch(): PrunedCounts {
    const now = this.o.clock.now();
    const counts = noneYet();
    for (const key of Object.keys(this.statements) as (keyof RetentionWindows)[]) {
      const days = this.o.windows[key];
      if (days <= 0) continue;
      const before = new Date(now - days * DAY_MS).toISOString();
      counts[key] = this.statements[key].run(before, this.o.batchRows).changes;
    }
    return counts;
  }

  /** Prunes everything past its window, a batch at a time, yielding to the event loop between. */
  async pruneAll(): Promise<PrunedCounts> {
    const total = noneYet();
    for (;;) {
      const counts = this.pruneBatch();
      let more = false;
      for (const key of Object.keys(total) as (keyof RetentionWindows)[]) {
        total[key] += counts[key];
        if (counts[key] >= this.o.batchRows) more = true;
      }
      if (!more) break;
      await new Promise((resolve) => setImmediate(resolve));
      if (this.stopped) break;
    }
    if (Object.values(total).some((n) => n > 0)) {
      this.o.log.info({ pruned: total }, 'retention: rows past their window deleted');
    }
    return total;
  }

  start(): void {
    const run = (): void => {
      this.pruneAll()
        .catch((err: unknown) =>
          this.o.log.error({ err: (err as Error).message }, 'retention run failed'),
        )
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(run, this.o.intervalMs).unref();
        });
    };
    this.timer = setTimeout(run, 0).unref();
  }

  stop(): void {
    this.stopped = true;
    clearUnrefTimer(this.timer);
    this.timer = null;
  }
}
