import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../src/store/database.js';
import { relaxed, relaxedEscalations, releaseRelaxed } from '../src/store/durability.js';
import { Outbox } from '../src/store/outbox.js';

/**
 * Relaxed durability (src/store/durability.ts): meter samples and statuses commit without an
 * fsync, but a write that turns out to move money or a session's state is synced before it
 * returns, and the connection is always back at synchronous=FULL afterwards.
 */
let dir: string;
let db: Db;
const FULL = 2;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-durability-'));
  db = openDatabase(join(dir, 'gateway.db'));
  db.exec(
    "INSERT INTO charger_info (charger_id, protocol, last_seen_at) VALUES ('CP-1', 'ocpp1.6', 'x')",
  );
});

afterEach(() => {
  releaseRelaxed(db);
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const synchronous = () => db.pragma('synchronous', { simple: true });
const seen = () =>
  (
    db.prepare("SELECT last_seen_at AS at FROM charger_info WHERE charger_id = 'CP-1'").get() as {
      at: string;
    }
  ).at;

describe('relaxed durability', () => {
  it('commits a write that moves no money without a sync, and leaves the connection at FULL', () => {
    const before = relaxedEscalations();
    relaxed(db, () => db.prepare("UPDATE charger_info SET last_seen_at = 'y'").run());
    expect(seen()).toBe('y');
    expect(relaxedEscalations()).toBe(before);
    expect(synchronous()).toBe(FULL);
  });

  it('syncs before returning when the write added an outbox row (a state change the cloud must hear)', () => {
    const before = relaxedEscalations();
    relaxed(db, () => new Outbox(db).enqueue('sessions', { type: 'session_state' }, 'now'));
    expect(relaxedEscalations()).toBe(before + 1);
    expect(synchronous()).toBe(FULL);
  });

  it('rolls back a write that throws, and still restores FULL', () => {
    expect(() =>
      relaxed(db, () => {
        db.prepare("UPDATE charger_info SET last_seen_at = 'z'").run();
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(seen()).toBe('x');
    expect(synchronous()).toBe(FULL);
  });

  it('inside a transaction, joins it: the outer commit decides', () => {
    expect(() =>
      db.transaction(() => {
        relaxed(db, () => db.prepare("UPDATE charger_info SET last_seen_at = 'w'").run());
        throw new Error('outer fails');
      })(),
    ).toThrow('outer fails');
    expect(seen()).toBe('x');
    expect(synchronous()).toBe(FULL);
  });

  it('a relaxed commit survives the process being killed right after it', () => {
    const path = join(dir, 'gateway.db');
    const durability = new URL('../dist/store/durability.js', import.meta.url).href;
    const database = new URL('../dist/store/database.js', import.meta.url).href;
    const script = `
      const { openDatabase } = await import(${JSON.stringify(database)});
      const { relaxed } = await import(${JSON.stringify(durability)});
      const db = openDatabase(${JSON.stringify(path)});
      relaxed(db, () => db.prepare("UPDATE charger_info SET last_seen_at = 'killed'").run());
      process.kill(process.pid, 'SIGKILL');`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script]);
    expect(child.signal).toBe('SIGKILL');
    expect(seen()).toBe('killed');
  });
});
