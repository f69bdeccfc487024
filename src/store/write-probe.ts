import type { Statement } from 'better-sqlite3';
import { databaseAdvice, type Db } from './database.js';

/**
 * Whether the database takes a write right now: one committed write of a one-row table
 * (gateway_probe), synced like any money write. A file opened read-only, a full disk, a lost
 * mount or a lock held too long all fail it, which no read or rolled-back write would show.
 * The answer is kept for `reuseMs`, so a busy readiness probe costs at most one fsync a second.
 */
export class WriteProbe {
  private readonly stmt: Statement<[number, string]>;
  private last: { atMs: number; problem: string | null } | null = null;

  constructor(
    private readonly db: Db,
    private readonly reuseMs = 1000,
  ) {
    this.stmt = db.prepare(
      `INSERT INTO gateway_probe (id, pid, at) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, at = excluded.at`,
    );
  }

  /** null when a write went through; else what failed, naming the file and what to do. */
  check(nowMs: number): string | null {
    if (this.last && nowMs - this.last.atMs < this.reuseMs && nowMs >= this.last.atMs) {
      return this.last.problem;
    }
    let problem: string | null = null;
    try {
      this.stmt.run(process.pid, new Date(nowMs).toISOString());
    } catch (err) {
      problem = `database ${this.db.name} cannot be written: ${databaseAdvice(err)}`;
    }
    this.last = { atMs: nowMs, problem };
    return problem;
  }
}
