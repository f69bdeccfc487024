import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectorStateStore } from '../src/ocpp/charger-state/connector-state.js';
import { systemClock } from '../src/shared/clock.js';
import { openDatabase } from '../src/store/database.js';
import { migrate } from '../src/store/migrations.js';
import { adoptPageSize, PAGE_SIZE } from '../src/store/page-size.js';

const dirs: string[] = [];
function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-pages-'));
  dirs.push(dir);
  return join(dir, 'gateway.db');
}
/** A gateway database as an older release made it: SQLite's 4 KiB pages, in WAL, one fleet. */
function oldDatabase(): string {
  const path = tempDb();
  const old = new Database(path);
  old.pragma('journal_mode = WAL');
  migrate(old);
  old.exec(
    `INSERT INTO fleets (id, name, created_at) VALUES ('f1', 'Fleet', '2026-12-06T00:00:00.000Z')`,
  );
  expect(old.pragma('page_size', { simple: true })).toBe(4096);
  old.close();
  return path;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the database page size', () => {
  it('a new database is made with the gateway’s page size, in WAL', () => {
    const db = openDatabase(tempDb());
    expect(db.pragma('page_size', { simple: true })).toBe(PAGE_SIZE);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(adoptPageSize(db)).toEqual({ changed: false, pageSize: PAGE_SIZE });
    db.close();
  });

  it('a database made with 4 KiB pages is rewritten once, every row kept, back in WAL', () => {
    const db = openDatabase(oldDatabase());
    expect(db.pragma('page_size', { simple: true })).toBe(4096);
    const change = adoptPageSize(db);
    expect(change).toMatchObject({ changed: true, from: 4096, to: PAGE_SIZE });
    expect(db.pragma('page_size', { simple: true })).toBe(PAGE_SIZE);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.prepare('SELECT name FROM fleets').all()).toEqual([{ name: 'Fleet' }]);
    expect(adoptPageSize(db)).toEqual({ changed: false, pageSize: PAGE_SIZE });
    db.close();
  });

  it('a database another connection holds open keeps its pages and works on', () => {
    const path = oldDatabase();
    const db = openDatabase(path);
    const reader = new Database(path);
    reader.prepare('SELECT count(*) FROM fleets').get();
    const read = reader.prepare('SELECT * FROM fleets');
    reader.exec('BEGIN');
    read.all();
    try {
      const change = adoptPageSize(db);
      expect(change).toMatchObject({ changed: false, pageSize: 4096 });
      expect('failed' in change && change.failed).toBeTruthy();
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      reader.exec('COMMIT');
      reader.close();
    }
    db.close();
  });
});

describe('connector statuses', () => {
  it('a status told again writes no row; a change, or the first, does', () => {
    const db = openDatabase(':memory:');
    let writes = 0;
    const store = new ConnectorStateStore(db, systemClock, undefined, (write) => {
      writes += 1;
      write();
    });
    store.setStatus('CP-1', '1', 'available', null);
    store.setStatus('CP-1', '1', 'available', null);
    expect(writes).toBe(1);
    store.setStatus('CP-1', '1', 'charging', null);
    store.setStatus('CP-1', '1', 'charging', null);
    store.setStatus('CP-1', '1', 'charging', 'EVCommunicationError');
    expect(writes).toBe(3);
    expect(db.prepare('SELECT status, error_code FROM connector_state').get()).toEqual({
      status: 'charging',
      error_code: 'EVCommunicationError',
    });
    db.close();
  });
});
