import Database from 'better-sqlite3';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrate } from './migrations.js';
import { databaseAdvice } from './database-advice.js';
import { choosePageSize } from './page-size.js';

export type Db = Database.Database;

export interface OpenOptions {
  /**
   * Refuse to create the database: for commands that only read or change an existing one
   * (`ledger verify`, `backup`, `api-key ...`), where a mistyped path would otherwise give an
   * empty database that holds every invariant.
   */
  mustExist?: boolean;
  /**
   * SQLite's page cache for this connection, in KiB (`database.cacheKiB`: the gateway's); left
   * out, better-sqlite3's 16 MiB, for a command that runs a moment.
   */
  cacheKiB?: number;
}

/** A database that could not be opened; the message names the file and what to do. */
export class DatabaseError extends Error {}

/**
 * Opens the gateway database with the pragmas every connection must have, then migrates it.
 * synchronous=FULL matters: better-sqlite3's default in WAL mode is NORMAL, which can lose the
 * last committed transactions (debits, credits) on power loss.
 */
export function openDatabase(path: string, options: OpenOptions = {}): Db {
  if (path !== ':memory:' && options.mustExist && !existsSync(path)) {
    throw new DatabaseError(
      `no database at ${path} (database.path): check the path in the config; ` +
        '`fleet-gateway serve` or `seed` creates it',
    );
  }
  let db: Db | undefined;
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    db = new Database(path, { fileMustExist: options.mustExist === true });
    choosePageSize(db);
    enableWal(db);
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    if (options.cacheKiB !== undefined) db.pragma(`cache_size = -${options.cacheKiB}`);
    migrate(db);
    return db;
  } catch (err) {
    db?.close();
    throw new DatabaseError(`database ${path}: ${databaseAdvice(err)}`);
  }
}

const WAL_SWITCH_WAIT_MS = 5000;

/**
 * Switching a new file to WAL takes an exclusive lock, and SQLite answers SQLITE_BUSY at once,
 * without its busy handler, when another process opening the same new file (the gateway and a
 * CLI command at once) holds a lock on it: retried for as long as busy_timeout would wait
 * (measured: 2 of 240 such opens failed without the retry, none of 540 with it).
 */
function enableWal(db: Db): void {
  const deadline = Date.now() + WAL_SWITCH_WAIT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

export { databaseAdvice };
