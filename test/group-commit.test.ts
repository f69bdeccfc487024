import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../src/store/database.js';
import { releaseRelaxed } from '../src/store/durability.js';
import { closeGroupCommit, groupCommit, GroupCommit } from '../src/store/group-commit.js';

/**
 * Group commit (src/store/group-commit.ts) on real SQLite files: the writes handed in during one
 * turn commit as one transaction, each atomic on its own, one that throws rolled back alone, every
 * caller answered only after the shared COMMIT.
 */
let dir: string;
let path: string;
let db: Db;

const TABLE = 'CREATE TABLE IF NOT EXISTS gc_rows (k TEXT PRIMARY KEY, tx INTEGER NOT NULL)';

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-group-commit-'));
  path = join(dir, 'gateway.db');
  db = openDatabase(path);
  db.exec(TABLE);
});

afterEach(() => {
  closeGroupCommit(db);
  releaseRelaxed(db);
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const rows = (d: Database.Database = db) =>
  d.prepare('SELECT k, tx FROM gc_rows ORDER BY k').all() as { k: string; tx: number }[];

/** A transaction of the property: writes `keys`, then throws (after them) if told to. */
interface Tx {
  keys: string[];
  fails: 'no' | 'throws' | 'duplicate';
  tier: 'strict' | 'relaxed';
}

const txArb: fc.Arbitrary<Tx> = fc.record({
  keys: fc.uniqueArray(fc.integer({ min: 0, max: 9 }).map(String), { minLength: 1, maxLength: 4 }),
  fails: fc.constantFrom('no', 'no', 'throws', 'duplicate'),
  tier: fc.constantFrom('strict', 'relaxed'),
});

describe('group commit', () => {
  it('commits exactly the transactions that did not throw, each whole, in one batch', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(txArb, { minLength: 1, maxLength: 12 }), async (txs) => {
        run++;
        db.exec('DELETE FROM gc_rows');
        const insert = db.prepare('INSERT INTO gc_rows (k, tx) VALUES (?, ?)');
        const before = groupCommit(db).counts().batches;
        const g = groupCommit(db);
        // Keys are per transaction (tx index in the key), so only 'duplicate' collides.
        const answers = await Promise.allSettled(
          txs.map((t, i) => {
            const work = () => {
              for (const k of t.keys) insert.run(`${run}-${i}-${k}`, i);
              if (t.fails === 'throws') throw new Error(`tx ${i} throws`);
              if (t.fails === 'duplicate') insert.run(`${run}-${i}-${t.keys[0]}`, i);
              return i;
            };
            return t.tier === 'strict' ? g.strict(work) : g.relaxed(work);
          }),
        );
        expect(groupCommit(db).counts().batches).toBe(before + 1);
        const expected = txs
          .flatMap((t, i) => (t.fails === 'no' ? t.keys.map((k) => `${run}-${i}-${k}`) : []))
          .sort();
        // Read through a second connection: what is there is committed, not just this
        // connection's view.
        const other = new Database(path, { readonly: true });
        try {
          expect(rows(other).map((r) => r.k)).toEqual(expected);
        } finally {
          other.close();
        }
        answers.forEach((a, i) => {
          if (txs[i]?.fails === 'no') expect(a).toEqual({ status: 'fulfilled', value: i });
          else expect(a.status).toBe('rejected');
        });
      }),
      { numRuns: 60 },
    );
  });

  it('answers a caller only after the shared COMMIT: another connection already sees its write', async () => {
    const other = new Database(path, { readonly: true });
    try {
      const seen = await Promise.all(
        [1, 2, 3].map((i) =>
          groupCommit(db)
            .strict(() => db.prepare('INSERT INTO gc_rows (k, tx) VALUES (?, ?)').run(`a${i}`, i))
            .then(() => rows(other).some((r) => r.k === `a${i}`)),
        ),
      );
      expect(seen).toEqual([true, true, true]);
    } finally {
      other.close();
    }
  });

  it('writes handed in from within a batch go to the next one, not lost', async () => {
    const g = groupCommit(db);
    const inner: Promise<unknown>[] = [];
    await g.strict(() => {
      inner.push(g.strict(() => db.prepare("INSERT INTO gc_rows VALUES ('late', 1)").run()));
    });
    await Promise.all(inner);
    expect(rows().map((r) => r.k)).toEqual(['late']);
  });

  const insert = (k: string) => () => db.prepare('INSERT INTO gc_rows VALUES (?, 1)').run(k);
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('a burst of strict writes read over several turns shares one commit', async () => {
    // Its bound lifted: on a loaded machine the turns below may take longer than a burst waits.
    const g = new GroupCommit(db, 60_000);
    const before = g.counts().batches;
    const writes = [g.strict(insert('a')), g.strict(insert('b'))];
    // Handed in by the turns after: as the rest of a burst read from the sockets a moment later.
    await nextTurn();
    writes.push(g.strict(insert('c')));
    await nextTurn();
    writes.push(g.strict(insert('d')));
    await Promise.all(writes);
    expect(g.counts().batches).toBe(before + 1);
    expect(rows().map((r) => r.k)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a deferred write is answered before the fsync of the strict writes of its turn', async () => {
    const g = groupCommit(db);
    const answered: string[] = [];
    await Promise.all([
      g.strict(insert('s')).then(() => answered.push('strict')),
      g.deferred(insert('d')).then(() => answered.push('deferred')),
    ]);
    expect(answered).toEqual(['deferred', 'strict']);
    expect(rows().map((r) => r.k)).toEqual(['d', 's']);
  });

  it('a lone strict write commits in the turn it came in', async () => {
    const g = groupCommit(db);
    let answered = false;
    void g.strict(insert('lone')).then(() => (answered = true));
    await nextTurn();
    expect(answered).toBe(true);
  });
});

/**
 * A child process hands in strict writes, one batch per turn, each write two rows, and prints the
 * key of each write once answered; then it dies by SIGKILL: at a random moment (from the parent),
 * or inside a batch after its savepoints ran and before its COMMIT. After the kill, every
 * answered write is there whole, and no write is there in part.
 */
async function crashChild(mode: 'random' | 'before-commit'): Promise<{
  answered: string[];
  signal: NodeJS.Signals | null;
}> {
  const groupUrl = new URL('../dist/store/group-commit.js', import.meta.url).href;
  const dbUrl = new URL('../dist/store/database.js', import.meta.url).href;
  const script = `
    const { writeSync } = await import('node:fs');
    const { openDatabase } = await import(${JSON.stringify(dbUrl)});
    const { groupCommit } = await import(${JSON.stringify(groupUrl)});
    const db = openDatabase(${JSON.stringify(path)});
    db.exec(${JSON.stringify(TABLE)});
    const insert = db.prepare('INSERT INTO gc_rows (k, tx) VALUES (?, ?)');
    const g = groupCommit(db);
    const mode = ${JSON.stringify(mode)};
    for (let batch = 0; ; batch++) {
      const writes = [];
      for (let i = 0; i < 5; i++) {
        const key = batch + '-' + i;
        writes.push(g.strict(() => {
          insert.run(key + '-a', batch);
          insert.run(key + '-b', batch);
          if (mode === 'before-commit' && batch === 20 && i === 4) process.kill(process.pid, 'SIGKILL');
        }).then(() => writeSync(1, key + '\\n')));
      }
      await Promise.all(writes);
    }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    // Killed from outside once it has answered a good number of writes.
    if (mode === 'random' && out.split('\n').length > 300) child.kill('SIGKILL');
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, s) => resolve(s)),
  );
  clearTimeout(timer);
  if (err) throw new Error(err);
  return { answered: out.split('\n').filter((l) => l !== ''), signal };
}

describe('group commit across a crash', () => {
  for (const mode of ['random', 'before-commit'] as const) {
    it(`loses no answered write when killed (${mode})`, async () => {
      const { answered, signal } = await crashChild(mode);
      expect(signal).toBe('SIGKILL');
      expect(answered.length).toBeGreaterThan(0);
      const after = new Database(path);
      try {
        const keys = new Set(rows(after).map((r) => r.k));
        for (const a of answered) {
          expect(keys.has(`${a}-a`) && keys.has(`${a}-b`), a).toBe(true);
        }
        // Atomic: each write's two rows are there together or not at all.
        for (const k of keys) {
          const write = k.slice(0, -2);
          expect(keys.has(`${write}-a`) && keys.has(`${write}-b`), write).toBe(true);
        }
        if (mode === 'before-commit') {
          // The batch killed before its COMMIT left nothing, and every batch before it is whole.
          expect([...keys].some((k) => k.startsWith('20-'))).toBe(false);
          expect(keys.size).toBe(20 * 5 * 2);
          expect(answered.length).toBe(20 * 5);
        }
      } finally {
        after.close();
      }
    });
  }
});
