import { closeSync, fsyncSync, openSync } from 'node:fs';
import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';
import { atomic } from './atomic.js';

/** What `relaxed` keeps per database: its prepared statements and a handle on its WAL. */
interface Relaxable {
  marks: Statement<[], { n: number }>;
  normal: Statement<[]>;
  full: Statement<[]>;
  /** Opened at the first sync: the WAL exists once anything has been committed. */
  walFd: number | null;
}

const prepared = new WeakMap<Db, Relaxable>();
let escalations = 0;

function relaxable(db: Db): Relaxable {
  let r = prepared.get(db);
  if (!r) {
    r = {
      // AUTOINCREMENT keeps these counters monotonic: any row added moves the sum.
      marks: db.prepare(
        "SELECT coalesce(sum(seq), 0) AS n FROM sqlite_sequence WHERE name IN ('ledger_entries', 'outbox')",
      ),
      normal: db.prepare('PRAGMA synchronous = NORMAL'),
      full: db.prepare('PRAGMA synchronous = FULL'),
      walFd: null,
    };
    prepared.set(db, r);
  }
  return r;
}

/**
 * Two kinds of write share the database. Money (ledger entries) and what the cloud must hear about
 * (outbox rows: every session state change, every reply) must be on disk before anyone is told:
 * the connection runs synchronous=FULL, and each such commit waits for an fsync of the WAL.
 * Meter registers, connector statuses and charger last-seen stamps are written many times a
 * second on a busy site, and losing the last few of them to a power cut costs nothing that the
 * next message does not restore: a session whose last registers were lost bills less, never more
 * (npm run bench measured the fsync per meter sample as the gateway's throughput limit).
 *
 * `relaxed` runs such a write as one transaction committed at synchronous=NORMAL: atomic, and
 * safe against a crash of the process, but made durable by the next FULL commit or checkpoint
 * (WAL frames are appended in order, so a power cut loses a suffix, never a write out of order).
 * If the transaction turned out to write a ledger entry or an outbox row after all (a sample
 * that starts a 2.0.1 transaction, an event that ends one), the WAL is fsynced before
 * `relaxed` returns, exactly what FULL would have done at that commit, so nothing is answered
 * before it is durable.
 */
export function relaxed<T>(db: Db, write: () => T): T {
  // Inside a transaction the outer commit decides; a savepoint needs no pragma.
  if (db.inTransaction) return atomic(db, write);
  const r = relaxable(db);
  const before = r.marks.get()?.n ?? 0;
  r.normal.run();
  let result: T;
  try {
    result = atomic(db, write);
  } finally {
    r.full.run();
  }
  if ((r.marks.get()?.n ?? 0) !== before && !db.memory) {
    r.walFd ??= openSync(`${db.name}-wal`, 'r');
    fsyncSync(r.walFd);
    escalations++;
  }
  return result;
}

/** How many relaxed writes turned out to move money or state and were synced: for tests. */
export function relaxedEscalations(): number {
  return escalations;
}

/** Closes the WAL handle `relaxed` keeps for a database; call before closing the database. */
export function releaseRelaxed(db: Db): void {
  const r = prepared.get(db);
  if (r?.walFd != null) closeSync(r.walFd);
  prepared.delete(db);
}
