import Database from 'better-sqlite3';
import { migrations } from '../../src/store/migrations.js';

/**
 * A database file as a gateway of schema `version` left it (its first `version` migrations), for
 * a test that writes rows in that shape and then opens it with today's migrations.
 */
export function databaseAtVersion(path: string, version: number): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  for (const sql of migrations.slice(0, version)) db.exec(sql);
  db.pragma(`user_version = ${version}`);
  return db;
}
