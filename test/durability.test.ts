import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../src/store/database.js';
import {
  durableOutboxBefore,
  relaxed,
  relaxedEscalations,
  releaseRelaxed,
} from '../src/store/durability.js';
import { closeGroupCommit, groupCommit } from '../src/store/group-commit.js';
import { Outbox } from '../src/store/outbox.js';
import { OutboxQueue } from '../src/uplink/outbox-queue.js';

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
  closeGroupCommit(db);
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

/**
 * The group commit's deferred tier (the Start's `authorized` mark): its outbox row commits without
 * a sync, and the uplink must not publish it before a sync made it durable: a power cut would take
 * back a row the cloud has seen, and its `seq` would be given to another.
 */
describe('outbox rows that may wait for the next sync', () => {
  const enqueue = (outbox: Outbox, n: number) =>
    outbox.enqueue('sessions', { type: 'session_state', n }, 'now');
  const published = (queue: OutboxQueue) =>
    queue.next(0, 10).map((r) => (JSON.parse(r.payload) as { n: number }).n);

  it('commits a deferred write unsynced and holds its row from the uplink until a strict commit syncs it', async () => {
    const outbox = new Outbox(db);
    const queue = new OutboxQueue(db);
    let told = 0;
    queue.onDurable(() => told++);
    await groupCommit(db).strict(() => enqueue(outbox, 1));
    const before = relaxedEscalations();
    await groupCommit(db).deferred(() => enqueue(outbox, 2));
    expect(relaxedEscalations()).toBe(before);
    expect(durableOutboxBefore(db)).toBe(2);
    expect(published(queue)).toEqual([1]);
    // A relaxed write that adds no outbox row leaves it waiting.
    await groupCommit(db).relaxed(() =>
      db.prepare("UPDATE charger_info SET last_seen_at = 'y'").run(),
    );
    expect(published(queue)).toEqual([1]);
    expect(told).toBe(0);
    await groupCommit(db).strict(() => enqueue(outbox, 3));
    expect(told).toBe(1);
    expect(durableOutboxBefore(db)).toBe(Infinity);
    expect(published(queue)).toEqual([1, 2, 3]);
  });

  it('a strict commit that changed no row (and so synced nothing) leaves the row waiting', async () => {
    const outbox = new Outbox(db);
    const queue = new OutboxQueue(db);
    await groupCommit(db).deferred(() => enqueue(outbox, 1));
    await groupCommit(db).strict(() =>
      db.prepare("UPDATE charger_info SET last_seen_at = 'y' WHERE charger_id = 'none'").run(),
    );
    expect(published(queue)).toEqual([]);
  });

  it('syncs a waiting row by itself when no strict commit comes', async () => {
    const outbox = new Outbox(db);
    const queue = new OutboxQueue(db);
    const durable = new Promise<void>((resolve) => queue.onDurable(resolve));
    await groupCommit(db).deferred(() => enqueue(outbox, 1));
    expect(published(queue)).toEqual([]);
    await durable;
    expect(published(queue)).toEqual([1]);
  });

  it('still syncs a batch in which another write added an outbox row', async () => {
    const outbox = new Outbox(db);
    const queue = new OutboxQueue(db);
    const before = relaxedEscalations();
    await Promise.all([
      groupCommit(db).deferred(() => enqueue(outbox, 1)),
      groupCommit(db).relaxed(() => enqueue(outbox, 2)),
    ]);
    expect(relaxedEscalations()).toBe(before + 1);
    expect(published(queue)).toEqual([1, 2]);
  });

  it('a deferred write inside a FULL transaction is synced by its commit', () => {
    const outbox = new Outbox(db);
    const queue = new OutboxQueue(db);
    db.transaction(() => enqueue(outbox, 1))();
    expect(durableOutboxBefore(db)).toBe(Infinity);
    expect(published(queue)).toEqual([1]);
  });
});
