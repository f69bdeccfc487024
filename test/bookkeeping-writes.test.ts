import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUSY_WRITES, BookkeepingWrites } from '../src/ocpp/charger-state/bookkeeping-writes.js';
import { createLogger } from '../src/shared/log.js';
import { openDatabase, type Db } from '../src/store/database.js';
import { releaseRelaxed } from '../src/store/durability.js';
import { closeGroupCommit, groupCommit } from '../src/store/group-commit.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The charger link's bookkeeping writes (src/ocpp/charger-state/bookkeeping-writes.ts) on a real SQLite file:
 * one at a time they go to the next group commit; a burst gathers into one write of it.
 */
let dir: string;
let db: Db;
let logLines: string[];
let writes: BookkeepingWrites;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-bookkeeping-'));
  db = openDatabase(join(dir, 'gateway.db'));
  db.exec('CREATE TABLE seen (id TEXT PRIMARY KEY, n INTEGER NOT NULL)');
  logLines = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  writes = new BookkeepingWrites(db, createLogger('info', sink));
});

afterEach(() => {
  closeGroupCommit(db);
  releaseRelaxed(db);
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const insert =
  (id: string, n = 1) =>
  () =>
    db.prepare('INSERT INTO seen (id, n) VALUES (?, ?)').run(id, n);
const count = () => (db.prepare('SELECT count(*) AS n FROM seen').get() as { n: number }).n;
const committedWrites = () => groupCommit(db).counts().writes;
const turn = () => new Promise((r) => setImmediate(r));

/** Enough writes at once to make the link busy: those after them gather. */
const burst = (prefix: string) => {
  for (let i = 0; i < BUSY_WRITES; i++) writes.add(insert(`${prefix}${i}`), 'last seen');
};

describe('bookkeeping writes', () => {
  it("a charger's few writes are each in the next group commit, without waiting", async () => {
    const before = committedWrites();
    writes.add(insert('a'), 'last seen');
    writes.add(insert('b'), 'boot');
    writes.add(insert('c'), 'connector status');
    await turn();
    expect(count()).toBe(3);
    expect(committedWrites() - before).toBe(3);
  });

  it('beyond BUSY_WRITES at once, the rest are gathered into one write of the group commit', async () => {
    const before = committedWrites();
    burst('w');
    for (let i = 0; i < 300; i++) writes.add(insert(`c${i}`), 'boot');
    await turn();
    expect(count()).toBe(BUSY_WRITES);
    await waitUntil(() => count() === BUSY_WRITES + 300, 2000, 'the gathered writes');
    expect(committedWrites() - before).toBe(BUSY_WRITES + 1);
  });

  it('a gathered statement that fails is logged and rolled back alone; the others are recorded', async () => {
    burst('w');
    writes.add(insert('y'), 'boot');
    writes.add(insert('w0'), 'connector status'); // the primary key is taken: this one fails
    writes.add(insert('z'), 'boot');
    await waitUntil(() => count() === BUSY_WRITES + 2, 2000, 'the writes around the failing one');
    expect(
      db.prepare("SELECT id FROM seen WHERE id IN ('y', 'z') ORDER BY id").pluck().all(),
    ).toEqual(['y', 'z']);
    await new Promise((r) => setTimeout(r, 20));
    const failed = logLines.map((l) => JSON.parse(l) as { msg: string; err?: string });
    expect(failed).toEqual([
      expect.objectContaining({ msg: 'connector status not recorded', err: expect.any(String) }),
    ]);
  });

  it('flush hands what is gathering to the group commit at once (at shutdown)', () => {
    burst('w');
    writes.add(insert('gathering'), 'last seen');
    writes.flush();
    groupCommit(db).flush();
    expect(count()).toBe(BUSY_WRITES + 1);
  });
});
