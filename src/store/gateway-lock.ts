import Database from 'better-sqlite3';
import { hostname } from 'node:os';
import { databaseAdvice } from './database.js';

/** The lock of a running gateway on its database; release it when the gateway stops. */
export interface GatewayLock {
  /** The lock file: `<database>.lock`. */
  path: string;
  release(): void;
}

/** Another gateway holds the database. */
export class GatewayLockedError extends Error {}

interface Holder {
  pid: number;
  host: string;
  started_at: string;
}

/**
 * One gateway per database: two would both answer chargers, both watch the same sessions and both
 * settle them. The lock is a small SQLite file beside the database (`<database>.lock`, rollback
 * journal) in which the holder keeps a write transaction open (a RESERVED lock) for as long as it
 * runs. The operating system drops that lock when the process ends, however it ends (SIGKILL,
 * power cut): no stale lock file to clean up, and no guessing from a pid that may have been
 * reused. Others can still read the file, so a second gateway learns who holds it (pid, host,
 * since when). The database itself stays unlocked: `ledger verify`, `backup` and the other CLI
 * commands work on a live gateway's database as before.
 */
export function acquireGatewayLock(databasePath: string, at: string): GatewayLock {
  const path = `${databasePath}.lock`;
  let db: Database.Database;
  try {
    db = new Database(path);
    db.pragma('journal_mode = DELETE');
    db.pragma('busy_timeout = 0');
    db.exec(
      'CREATE TABLE IF NOT EXISTS holder (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, host TEXT NOT NULL, started_at TEXT NOT NULL)',
    );
  } catch (err) {
    throw new Error(`gateway lock file ${path}: ${databaseAdvice(err)}`);
  }
  const refuse = (): never => {
    const holder = db.prepare('SELECT pid, host, started_at FROM holder').get() as
      Holder | undefined;
    db.close();
    const who = holder
      ? `pid ${holder.pid} on ${holder.host}, running since ${holder.started_at}`
      : 'another process';
    throw new GatewayLockedError(
      `database ${databasePath} is in use by another gateway (${who}; lock file ${path}): ` +
        'stop that gateway first, or give this one its own database.path',
    );
  };
  const begin = (): void => {
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_BUSY') refuse();
      throw err;
    }
  };
  // Name ourselves, then hold the lock. If another gateway slips in between the commit and the
  // second BEGIN, it has named itself and holds the lock, so this one refuses naming it.
  begin();
  db.prepare('INSERT OR REPLACE INTO holder (id, pid, host, started_at) VALUES (1, ?, ?, ?)').run(
    process.pid,
    hostname(),
    at,
  );
  db.exec('COMMIT');
  begin();
  return {
    path,
    release() {
      if (!db.open) return;
      db.exec('ROLLBACK');
      db.close();
    },
  };
}
