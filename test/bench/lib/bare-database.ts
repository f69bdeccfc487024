import Database from 'better-sqlite3';
import { migrate } from '../../../src/store/migrations.js';
import { PAGE_SIZE, WAL_CHECKPOINT_PAGES } from '../../../src/store/page-size.js';

/**
 * A bare reference's database: a file-backed WAL database with the pragmas of
 * src/store/database.ts (its page size and checkpoint interval, synchronous=FULL as every gateway
 * connection runs) and the gateway's schema, its CHECKs and triggers being part of what a write
 * costs. Nothing of the gateway's code runs on it but the migrations that made it.
 */
export function openBareDatabase(path: string): Database.Database {
  const db = new Database(path);
  db.pragma(`page_size = ${PAGE_SIZE}`);
  db.pragma('journal_mode = WAL');
  db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}
