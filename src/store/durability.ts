import { closeSync, fsyncSync, openSync } from 'node:fs';
import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';
import { atomic } from './atomic.js';

/** What `relaxed` keeps per database: its prepared statements and a handle on its WAL. */
interface Relaxable {
  marks: Statement<[], { ledger: number; outbox: number }>;
  changes: Statement<[], { n: number }>;
  normal: Statement<[]>;
  full: Statement<[]>;
  /** Opened at the first sync: the WAL exists once anything has been committed. */
  walFd: number | null;
  /** The outbox rows `outboxMayWait` added in the relaxed commit now open. */
  waiting: { rows: number; from: number } | null;
  /** The first outbox seq committed and not yet synced; null: every committed row is durable. */
  unsyncedFrom: number | null;
  /** Syncs what waits if no strict commit or escalation does it first. */
  syncTimer: NodeJS.Timeout | null;
  /** Told when rows that waited are durable (the uplink publishes them). */
  listeners: (() => void)[];
}

const prepared = new WeakMap<Db, Relaxable>();
let escalations = 0;

function relaxable(db: Db): Relaxable {
  let r = prepared.get(db);
  if (!r) {
    r = {
      // AUTOINCREMENT keeps these counters monotonic: any row added moves its table's.
      marks: db.prepare(
        `SELECT coalesce(sum(seq) FILTER (WHERE name = 'ledger_entries'), 0) AS ledger,
                coalesce(sum(seq) FILTER (WHERE name = 'outbox'), 0) AS outbox
           FROM sqlite_sequence WHERE name IN ('ledger_entries', 'outbox')`,
      ),
      changes: db.prepare('SELECT total_changes() AS n'),
      normal: db.prepare('PRAGMA synchronous = NORMAL'),
      full: db.prepare('PRAGMA synchronous = FULL'),
      walFd: null,
      waiting: null,
      unsyncedFrom: null,
      syncTimer: null,
      listeners: [],
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
 * before it is durable; except the outbox rows of an `outboxMayWait` write, which wait for the
 * next sync, held back from the uplink until then.
 */
export function relaxed<T>(db: Db, write: () => T): T {
  // Inside a transaction the outer commit decides; a savepoint needs no pragma.
  if (db.inTransaction) return atomic(db, write);
  const r = relaxable(db);
  const before = r.marks.get();
  r.normal.run();
  const waiting = { rows: 0, from: 0 };
  r.waiting = waiting;
  let result: T;
  try {
    result = atomic(db, write);
  } finally {
    r.waiting = null;
    r.full.run();
  }
  const after = r.marks.get();
  if (db.memory || !before || !after) return result;
  if (after.ledger !== before.ledger || after.outbox - before.outbox > waiting.rows) {
    sync(db, r);
    escalations++;
  } else if (waiting.rows > 0) {
    r.unsyncedFrom ??= waiting.from;
    r.syncTimer ??= setTimeout(() => sync(db, r), WAITING_SYNC_MS).unref();
  }
  return result;
}

/**
 * Longest an outbox row written by `outboxMayWait` goes unsynced when no strict commit comes
 * first (on a busy gateway the next Start's debit syncs it within milliseconds).
 */
const WAITING_SYNC_MS = 20;

/**
 * Runs `write` (inside a relaxed commit: the group commit's `deferred` tier) so that the outbox
 * rows it adds do not make that commit sync: they become durable with the next fsync, and until
 * then `durableOutboxBefore` holds them back from the uplink, so the cloud never sees a row a power
 * cut could take back (nor a `seq` that could be given again). Only for what recovery rebuilds from
 * the charger (the `authorized` mark); a ledger entry still syncs the commit. Inside a FULL
 * transaction it is just `write`: that commit syncs.
 */
export function outboxMayWait<T>(db: Db, write: () => T): T {
  const r = prepared.get(db);
  const waiting = r?.waiting;
  if (!r || !waiting) return write();
  const before = r.marks.get()?.outbox ?? 0;
  const result = write();
  const added = (r.marks.get()?.outbox ?? 0) - before;
  if (added > 0) {
    if (waiting.rows === 0) waiting.from = before + 1;
    waiting.rows += added;
  }
  return result;
}

/**
 * Outbox rows with a `seq` below this are durable (the uplink publishes only those); Infinity when
 * every committed row is.
 */
export function durableOutboxBefore(db: Db): number {
  return prepared.get(db)?.unsyncedFrom ?? Infinity;
}

/** `listener` is told each time outbox rows that waited for a sync have become durable. */
export function onOutboxDurable(db: Db, listener: () => void): void {
  relaxable(db).listeners.push(listener);
}

/**
 * Runs `commit`, a FULL transaction (the group commit's strict batch); `wrote()` must say, at its
 * end, whether a write in it changed a row. Only such a COMMIT syncs the WAL (one that wrote no
 * frame does not), and then the rows that waited are durable with it.
 */
export function committedFull<T>(db: Db, commit: () => T, wrote: () => boolean): T {
  const result = commit();
  const r = prepared.get(db);
  if (r && r.unsyncedFrom !== null && wrote()) settle(r);
  return result;
}

/** Rows changed on this connection so far (SQLite's total_changes()). */
export function changesSoFar(db: Db): number {
  const r = relaxable(db);
  return r.changes.get()?.n ?? 0;
}

function sync(db: Db, r: Relaxable): void {
  if (!db.open) return settle(r);
  r.walFd ??= openSync(`${db.name}-wal`, 'r');
  fsyncSync(r.walFd);
  settle(r);
}

function settle(r: Relaxable): void {
  if (r.syncTimer) clearTimeout(r.syncTimer);
  r.syncTimer = null;
  if (r.unsyncedFrom === null) return;
  r.unsyncedFrom = null;
  for (const listener of r.listeners) listener();
}

/** How many relaxed writes turned out to move money or state and were synced: for tests. */
export function relaxedEscalations(): number {
  return escalations;
}

/** Closes the WAL handle `relaxed` keeps for a database; call before closing the database. */
export function releaseRelaxed(db: Db): void {
  const r = prepared.get(db);
  if (r?.syncTimer) clearTimeout(r.syncTimer);
  if (r?.walFd != null) closeSync(r.walFd);
  prepared.delete(db);
}
