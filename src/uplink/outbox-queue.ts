import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import { durableOutboxBefore, onOutboxDurable, relaxed } from '../store/durability.js';

export interface OutboxRow {
  seq: number;
  topic: string;
  payload: string;
}

/** The uplink's view of the outbox table: unsent rows in order, marking sent, pruning, depth. */
export class OutboxQueue {
  private readonly nextStmt: Statement<[number, number, number], OutboxRow>;
  private readonly markStmt: Statement<[string, number]>;
  private readonly pruneStmt: Statement<[string, number]>;
  private readonly depthStmt: Statement<[], { n: number; oldest: string | null }>;

  constructor(private readonly db: Db) {
    this.nextStmt = db.prepare(
      `SELECT seq, topic, payload FROM outbox WHERE sent_at IS NULL AND seq > ? AND seq < ?
       ORDER BY seq LIMIT ?`,
    );
    this.markStmt = db.prepare('UPDATE outbox SET sent_at = ? WHERE seq = ? AND sent_at IS NULL');
    this.pruneStmt = db.prepare(
      `DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox
         WHERE sent_at IS NOT NULL AND sent_at < ? ORDER BY sent_at LIMIT ?)`,
    );
    this.depthStmt = db.prepare(
      'SELECT count(*) AS n, min(created_at) AS oldest FROM outbox WHERE sent_at IS NULL',
    );
  }

  /**
   * Unsent durable rows after `afterSeq`, oldest first. A row a power cut could still take back
   * (store/durability.ts, `outboxMayWait`) is not published: the cloud would have seen a row the
   * gateway lost, and its `seq` given again to another. `onDurable` tells when it may be.
   */
  next(afterSeq: number, limit: number): OutboxRow[] {
    const before = durableOutboxBefore(this.db);
    return this.nextStmt.all(
      afterSeq,
      before === Infinity ? Number.MAX_SAFE_INTEGER : before,
      limit,
    );
  }

  /** `listener` is told when rows held back by `next` have become durable. */
  onDurable(listener: () => void): void {
    onOutboxDurable(this.db, listener);
  }

  /**
   * Marks rows the broker acknowledged, in one transaction. Relaxed (store/durability.ts): a mark
   * lost to a power cut only publishes its row again, which the cloud drops by its id (at least
   * once); an fsync per acknowledgement batch was the settlement section's largest commit cost.
   */
  markSent(seqs: readonly number[], at: string): void {
    relaxed(this.db, () => {
      for (const seq of seqs) this.markStmt.run(at, seq);
    });
  }

  /**
   * Deletes at most `limit` rows sent before `before` (ISO); unsent rows are never deleted.
   * Returns how many.
   */
  pruneSent(before: string, limit: number): number {
    return this.pruneStmt.run(before, limit).changes;
  }

  depth(): { depth: number; oldestUnsentAt: string | null } {
    const row = this.depthStmt.get();
    return { depth: row?.n ?? 0, oldestUnsentAt: row?.oldest ?? null };
  }
}
