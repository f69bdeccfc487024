import type { Db } from './database.js';
import {
  changesSoFar,
  committedFull,
  durableOutboxBefore,
  outboxMayWait,
  relaxed,
} from './durability.js';
import { atomic, atomicImmediate } from './atomic.js';

/**
 * How a write's caller is answered. `strict`: only once its commit is on disk (synchronous=FULL:
 * money, session state the cloud must hear of). `relaxed`: once committed, synced only if it
 * turned out to write a ledger entry or an outbox row (store/durability.ts). `deferred`: once
 * committed, its outbox rows made durable by the next sync and held from the uplink until then
 * (`outboxMayWait`): for what recovery rebuilds from the charger.
 */
export type Tier = 'strict' | 'relaxed' | 'deferred';

/** Bounds on how long a burst's first write waits for the rest, and on the batch it gathers. */
const GATHER_MAX_MS = 2;
const GATHER_MAX_WRITES = 256;

interface Pending {
  work: () => unknown;
  tier: Tier;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit: the writes handed in during one turn of the event loop run, in the order they
 * came, as ONE SQLite transaction, each in its own savepoint (better-sqlite3 nests a transaction
 * function in an open transaction as SAVEPOINT / RELEASE, ROLLBACK TO on a throw). So each write
 * is atomic on its own, one that throws is rolled back alone and only its caller sees the error,
 * and the batch pays for one commit: one WAL append of each page it touched and, when any write
 * in it is strict, one fsync, before any caller is answered.
 *
 * The work runs in a setImmediate after the turn's I/O callbacks: synchronously, so nothing else
 * runs between the first savepoint and the COMMIT, and every promise is settled after the COMMIT
 * returned (its continuations are microtasks after the flush). A caller must not hold anything it
 * read before handing the work in as still true: a check that guards a write belongs in its work.
 *
 * A burst (two strict writes or more in the batch, more arriving in the last turn) waits one more
 * turn for the frames and requests already read from the sockets, so 50 stops sent at once share
 * an fsync or two rather than one per turn they were read in; never longer than GATHER_MAX_MS nor
 * beyond GATHER_MAX_WRITES. A lone strict write commits in the turn it came in, as it always did.
 *
 * A deferred write does not wait for the fsync of the strict writes of its turn: it commits
 * before them, in a transaction of its own, and is answered before they commit two turns later.
 * So the tier is only for a write that does not depend on the others of its turn (the `authorized`
 * mark: a StartTransaction that overtook it moves the session on from either state).
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private batches = 0;
  private writes = 0;
  /** Strict writes in the queue, and how many of them the last gathering turn saw. */
  private strictQueued = 0;
  private strictSeen = 0;
  private gatherSince = 0;

  /** `gatherMaxMs`: the burst wait's bound (GATHER_MAX_MS; a test that must not time out sets it). */
  constructor(
    private readonly db: Db,
    private readonly gatherMaxMs = GATHER_MAX_MS,
  ) {}

  /** Runs `work` in the next group commit; resolves with its result once the commit is durable. */
  strict<T>(work: () => T): Promise<T> {
    return this.enqueue(work, 'strict');
  }

  /** Runs `work` in the next group commit; resolves once committed (synced only when it moved money). */
  relaxed<T>(work: () => T): Promise<T> {
    return this.enqueue(work, 'relaxed');
  }

  /** Runs `work` in the next group commit; resolves once committed, its outbox rows unsynced. */
  deferred<T>(work: () => T): Promise<T> {
    return this.enqueue(work, 'deferred');
  }

  /** Batches committed and writes in them since the database was opened: for the bench and tests. */
  counts(): { batches: number; writes: number } {
    return { batches: this.batches, writes: this.writes };
  }

  /** Commits what is waiting now (at shutdown, before the database is closed). */
  flush(): void {
    this.commit(false);
  }

  /**
   * Commits the queue. `split`: deferred writes handed in with strict ones commit first, alone,
   * and the rest later, so a deferred write's caller is not answered after their fsync.
   */
  private commit(split: boolean): void {
    this.scheduled = false;
    this.strictQueued = 0;
    this.strictSeen = 0;
    let batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    if (
      split &&
      batch.some((p) => p.tier === 'deferred') &&
      batch.some((p) => p.tier === 'strict')
    ) {
      this.queue = batch.filter((p) => p.tier !== 'deferred');
      this.strictQueued = this.queue.filter((p) => p.tier === 'strict').length;
      this.scheduled = true;
      // Two turns on: the API writes an answer in the check phase after the one it was made in
      // (api/server.ts, onSend), and a Start answered on its deferred mark must not wait there
      // behind this fsync.
      setImmediate(() => setImmediate(() => this.gather()));
      batch = batch.filter((p) => p.tier === 'deferred');
    }
    const results: { ok: boolean; value: unknown }[] = [];
    // Whether a write that stayed changed a row: only then does a FULL COMMIT sync the WAL (and
    // what waited for a sync with it). Counted only while something waits.
    const count = durableOutboxBefore(this.db) !== Infinity;
    let wrote = false;
    const run = () => {
      for (const p of batch) {
        try {
          const before = count ? changesSoFar(this.db) : 0;
          const value =
            p.tier === 'deferred'
              ? outboxMayWait(this.db, () => atomic(this.db, p.work))
              : atomic(this.db, p.work);
          if (count && changesSoFar(this.db) !== before) wrote = true;
          results.push({ ok: true, value });
        } catch (err) {
          results.push({ ok: false, value: err });
        }
        // An I/O error or a full disk can end the whole transaction, not just the savepoint:
        // every write of the batch went with it.
        if (!this.db.inTransaction) throw results[results.length - 1]?.value;
      }
    };
    try {
      if (batch.some((p) => p.tier === 'strict')) {
        committedFull(
          this.db,
          () => atomicImmediate(this.db, run),
          () => wrote,
        );
      } else relaxed(this.db, run);
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    this.batches++;
    this.writes += batch.length;
    batch.forEach((p, i) => {
      const r = results[i];
      if (r?.ok) p.resolve(r.value);
      else p.reject(r?.value);
    });
  }

  private enqueue<T>(work: () => T, tier: Tier): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, tier, resolve: resolve as (v: unknown) => void, reject });
      if (tier === 'strict') this.strictQueued++;
      if (!this.scheduled) {
        this.scheduled = true;
        this.gatherSince = performance.now();
        setImmediate(() => this.gather());
      }
    });
  }

  /** Commits now, or after one more turn while a burst of strict writes keeps arriving. */
  private gather(): void {
    if (!this.scheduled) return; // flushed meanwhile (shutdown)
    const grew = this.strictQueued > this.strictSeen;
    this.strictSeen = this.strictQueued;
    if (
      grew &&
      this.strictQueued >= 2 &&
      this.queue.length < GATHER_MAX_WRITES &&
      performance.now() - this.gatherSince < this.gatherMaxMs
    ) {
      setImmediate(() => this.gather());
      return;
    }
    this.commit(true);
  }
}

const groups = new WeakMap<Db, GroupCommit>();

/** The database's group commit (one per connection: SQLite has one write transaction at a time). */
export function groupCommit(db: Db): GroupCommit {
  let g = groups.get(db);
  if (!g) {
    g = new GroupCommit(db);
    groups.set(db, g);
  }
  return g;
}

/**
 * Commits what waits and forgets the database's group commit; call before closing it. Returns
 * how many batches it committed and how many writes they held.
 */
export function closeGroupCommit(db: Db): { batches: number; writes: number } {
  const g = groups.get(db);
  g?.flush();
  groups.delete(db);
  return g?.counts() ?? { batches: 0, writes: 0 };
}
