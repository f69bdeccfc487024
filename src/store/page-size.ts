import type Database from 'better-sqlite3';
import { databaseAdvice } from './database-advice.js';

/**
 * The database's page size. Every commit appends each page it changed, whole, to the WAL, and a
 * meter sample changes one to three pages (its session row; a 2.0.1 event row and its key):
 * at SQLite's default 4,096 bytes a sample cost 10.7 KB of disk writes on the bench's site, at
 * 1,024 about a quarter of that (docs/benchmarks.md, "Bytes written to the disk"). Smaller pages
 * mean more of them per table and a level more in the largest indexes: a little more CPU per
 * lookup, which a mini PC's storage wear outweighs. 1,024 was SQLite's own default until 3.12.
 */
export const PAGE_SIZE = 1024;

/**
 * WAL pages a commit may leave before it copies them into the database file (SQLite's
 * `wal_autocheckpoint`, 1,000 pages by default): 4 MiB, what the default held at 4 KiB pages. A
 * checkpoint writes each page it copies into the file's page cache, where 4 KiB is the unit the
 * disk is written in, so one that copies the scattered 1 KiB pages a site's samples touched costs
 * up to four times their size; fewer checkpoints copy each hot page fewer times.
 */
export const WAL_CHECKPOINT_PAGES = 4096;

/**
 * Sets the page size of a database file not yet written (SQLite ignores it on one that was) and
 * the connection's checkpoint threshold: call right after opening, before the switch to WAL
 * writes the file's header.
 */
export function choosePageSize(db: Database.Database): void {
  db.pragma(`page_size = ${PAGE_SIZE}`);
  db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
}

export type PageSizeChange =
  | { changed: false; pageSize: number }
  | { changed: true; from: number; to: number; ms: number; bytes: number }
  | { changed: false; pageSize: number; failed: string };

/**
 * Rewrites a database made with another page size into PAGE_SIZE pages, once: a WAL database
 * cannot change its page size, so it leaves WAL, VACUUMs into the new size (a copy of every live
 * row, as big as the file, in a rollback-journal transaction: a crash or power cut keeps the old
 * file whole) and goes back to WAL. Only `serve` does it, holding the gateway's lock, before
 * anything else uses the connection. If it cannot (another process holds the file open, a full
 * disk), the database keeps its pages and works as before; the next start tries again.
 */
export function adoptPageSize(db: Database.Database): PageSizeChange {
  const from = db.pragma('page_size', { simple: true }) as number;
  if (db.memory || from === PAGE_SIZE) return { changed: false, pageSize: from };
  const started = performance.now();
  try {
    db.pragma('journal_mode = DELETE');
    try {
      db.pragma(`page_size = ${PAGE_SIZE}`);
      db.exec('VACUUM');
    } finally {
      db.pragma('journal_mode = WAL');
    }
  } catch (err) {
    return { changed: false, pageSize: from, failed: databaseAdvice(err) };
  }
  const to = db.pragma('page_size', { simple: true }) as number;
  const pages = db.pragma('page_count', { simple: true }) as number;
  return {
    changed: true,
    from,
    to,
    ms: Math.round(performance.now() - started),
    bytes: pages * to,
  };
}
