import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';
import { uuid7 } from '../shared/uuid7.js';

export type OutboxTopic = 'ledger' | 'sessions' | 'replies' | 'alerts';

/**
 * The outbox is written in the same transaction as the change it reports, so the uplink can
 * publish every change at least once and in order, whatever crashes in between. Each payload
 * carries a stable id for the receiver to drop duplicates.
 */
export class Outbox {
  private readonly insert: Statement<[string, string, string, string]>;
  private readonly backlogStmt: Statement<[], { n: number; oldest: string | null }>;
  private readonly listeners: (() => void)[] = [];

  constructor(db: Db) {
    this.insert = db.prepare(
      'INSERT INTO outbox (id, topic, payload, created_at) VALUES (?, ?, ?, ?)',
    );
    this.backlogStmt = db.prepare(
      'SELECT count(*) AS n, min(created_at) AS oldest FROM outbox WHERE sent_at IS NULL',
    );
  }

  enqueue(topic: OutboxTopic, payload: Record<string, unknown>, at: string): string {
    const id = uuid7();
    this.insert.run(id, topic, JSON.stringify({ id, ...payload }), at);
    // Told after the statement, not the commit: the listener must defer its reading (setImmediate).
    for (const listener of this.listeners) listener();
    return id;
  }

  /** Listeners (the uplink, the console's live feed) hear that a row may have been added. */
  onEnqueue(listener: () => void): void {
    this.listeners.push(listener);
  }

  depth(): number {
    return this.backlog().depth;
  }

  /** Unsent rows and when the oldest of them was written. */
  backlog(): { depth: number; oldestUnsentAt: string | null } {
    const row = this.backlogStmt.get();
    return { depth: row?.n ?? 0, oldestUnsentAt: row?.oldest ?? null };
  }
}
