import type Database from 'better-sqlite3';

/** `strict`: durable before it is answered (FULL, the WAL fsynced); `relaxed`: committed, not synced. */
export type BareTier = 'strict' | 'relaxed';

interface Pending {
  work: () => unknown;
  tier: BareTier;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

type Outcome = { ok: boolean; value: unknown };

/**
 * The gateway's group commit (src/store/group-commit.ts) reduced to what it does for durability:
 * the writes handed in during one turn of the event loop run in a setImmediate, in order, each in
 * its own savepoint, as ONE transaction; committed at synchronous=FULL (an fsync of the WAL) when
 * any of them is strict, else at synchronous=NORMAL on a connection that otherwise runs FULL, as
 * `relaxed` in src/store/durability.ts commits a meter sample. Each caller is answered after the
 * COMMIT. Left out: the gateway's wait for a burst's further writes, its deferred tier and its
 * escalation of a relaxed write that turned out to move money (a reference's relaxed writes never
 * do).
 */
export class BareGroupCommit {
  private queue: Pending[] = [];
  private readonly normal: Database.Statement;
  private readonly full: Database.Statement;
  /** One transaction function for every write: better-sqlite3 builds four wrappers per new one. */
  private readonly atomic: Database.Transaction<(work: () => unknown) => unknown>;
  private readonly batch: Database.Transaction<(batch: Pending[]) => Outcome[]>;

  constructor(db: Database.Database) {
    this.normal = db.prepare('PRAGMA synchronous = NORMAL');
    this.full = db.prepare('PRAGMA synchronous = FULL');
    this.atomic = db.transaction((work: () => unknown) => work());
    this.batch = db.transaction((batch: Pending[]) =>
      batch.map((p): Outcome => {
        try {
          return { ok: true, value: this.atomic(p.work) };
        } catch (err) {
          return { ok: false, value: err };
        }
      }),
    );
  }

  write<T>(tier: BareTier, work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(() => this.commit());
      this.queue.push({ work, tier, resolve: resolve as (v: unknown) => void, reject });
    });
  }

  private commit(): void {
    const batch = this.queue;
    this.queue = [];
    let results: Outcome[];
    try {
      if (batch.some((p) => p.tier === 'strict')) results = this.batch(batch);
      else {
        this.normal.run();
        try {
          results = this.batch(batch);
        } finally {
          this.full.run();
        }
      }
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    batch.forEach((p, i) => {
      const r = results[i];
      if (r?.ok) p.resolve(r.value);
      else p.reject(r?.value);
    });
  }
}
