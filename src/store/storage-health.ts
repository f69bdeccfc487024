import { statSync } from 'node:fs';
import type { Db } from './database.js';
import type { Outbox } from './outbox.js';

/** When an outbox that is not draining (uplink down) is worth a warning, then an error. */
export interface OutboxThresholds {
  warnDepth: number;
  errorDepth: number;
  warnAgeMs: number;
  errorAgeMs: number;
}

export type AlarmLevel = 'ok' | 'warn' | 'error';

export interface OutboxHealth {
  /** Unsent rows. */
  depth: number;
  /** created_at of the oldest unsent row; null when everything was published. */
  oldestUnsentAt: string | null;
  /** Age of that row in seconds (0 when none). */
  oldestUnsentAgeSeconds: number;
  level: AlarmLevel;
  /** Which thresholds are crossed, in words; empty when ok. */
  reasons: string[];
}

/** Sizes of the database files in bytes (the WAL holds commits not yet checkpointed). */
export interface DatabaseSize {
  path: string;
  databaseBytes: number;
  walBytes: number;
  totalBytes: number;
}

/** The outbox backlog measured against its thresholds. */
export function outboxHealthOf(
  depth: number,
  oldestUnsentAt: string | null,
  nowMs: number,
  t: OutboxThresholds,
): OutboxHealth {
  const ageMs = oldestUnsentAt === null ? 0 : Math.max(0, nowMs - Date.parse(oldestUnsentAt));
  const reasons: string[] = [];
  let level: AlarmLevel = 'ok';
  const raise = (to: AlarmLevel, reason: string) => {
    reasons.push(reason);
    if (to === 'error' || level === 'ok') level = to;
  };
  if (depth >= t.errorDepth) raise('error', `${depth} unsent rows (errorDepth ${t.errorDepth})`);
  else if (depth >= t.warnDepth) raise('warn', `${depth} unsent rows (warnDepth ${t.warnDepth})`);
  const minutes = Math.floor(ageMs / 60_000);
  if (depth > 0 && ageMs >= t.errorAgeMs) {
    raise(
      'error',
      `oldest unsent row is ${minutes} min old (errorAgeMinutes ${t.errorAgeMs / 60_000})`,
    );
  } else if (depth > 0 && ageMs >= t.warnAgeMs) {
    raise(
      'warn',
      `oldest unsent row is ${minutes} min old (warnAgeMinutes ${t.warnAgeMs / 60_000})`,
    );
  }
  return {
    depth,
    oldestUnsentAt,
    oldestUnsentAgeSeconds: Math.floor(ageMs / 1000),
    level,
    reasons,
  };
}

/** Size of a database file and its WAL; a file that is not there counts 0. */
export function databaseSizeOf(path: string): DatabaseSize {
  const size = (file: string): number => {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  };
  const databaseBytes = path === ':memory:' ? 0 : size(path);
  const walBytes = path === ':memory:' ? 0 : size(`${path}-wal`);
  return { path, databaseBytes, walBytes, totalBytes: databaseBytes + walBytes };
}

/**
 * What a monitor reads about the gateway's storage: the outbox backlog and the size of the files.
 * A metrics module calls `outboxHealth()` and `databaseSizeBytes()`; GET /admin/v1/health shows both.
 */
export class StorageHealth {
  constructor(
    private readonly db: Db,
    private readonly outbox: Outbox,
    private readonly now: () => number,
    private readonly thresholds: OutboxThresholds,
  ) {}

  outboxHealth(): OutboxHealth {
    const { depth, oldestUnsentAt } = this.outbox.backlog();
    return outboxHealthOf(depth, oldestUnsentAt, this.now(), this.thresholds);
  }

  databaseSize(): DatabaseSize {
    return databaseSizeOf(this.db.name);
  }

  /** Database file plus WAL, in bytes. */
  databaseSizeBytes(): number {
    return this.databaseSize().totalBytes;
  }
}
