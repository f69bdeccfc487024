import { spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountPowerCutFs, type PowerCutFs } from './power-cut/powercut-fs.js';

/**
 * The power-cut file system itself, before anything is proven with it: a cut takes every file back
 * to its last fsync and removes the names no directory fsync made durable; a descriptor open
 * across the cut reads the synced bytes (no page cache); SQLite runs on it (its -shm is mapped)
 * and loses exactly what it did not sync.
 */

let fs: PowerCutFs;
beforeAll(async () => {
  fs = await mountPowerCutFs();
});
afterAll(async () => {
  await fs?.close();
});

let n = 0;
/** A fresh folder on the mount, durable (its name synced), for one case. */
function folder(): string {
  const dir = join(fs.mount, `case-${++n}`);
  mkdirSync(dir);
  syncDir(fs.mount);
  return dir;
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  fsyncSync(fd);
  closeSync(fd);
}

function bytes(length: number, seed: number): Buffer {
  return Buffer.from(Array.from({ length }, (_, i) => (i * 31 + seed * 7 + 1) % 251));
}

function readFd(fd: number): Buffer {
  const out: Buffer[] = [];
  const chunk = Buffer.alloc(65536);
  for (let pos = 0; ;) {
    const got = readSync(fd, chunk, 0, chunk.length, pos);
    if (got === 0) return Buffer.concat(out);
    out.push(Buffer.from(chunk.subarray(0, got)));
    pos += got;
  }
}

describe('powercut-fs', () => {
  it('write, fsync, write, cut: the file reads back as it was at the fsync, size too', () => {
    const dir = folder();
    const path = join(dir, 'f');
    const synced = bytes(10_000, 1);
    const fd = openSync(path, 'w+');
    writeSync(fd, synced, 0, synced.length, 0);
    fsyncSync(fd);
    syncDir(dir);
    writeSync(fd, bytes(5000, 2), 0, 5000, 3000); // across two pages, inside the file
    writeSync(fd, bytes(9000, 3), 0, 9000, 9000); // past its end
    expect(readFd(fd).length).toBe(18_000);
    expect(fs.counters().pendingFiles).toBe(1);

    const dropped = fs.cut();
    expect(dropped).toMatchObject({ files: 1, bytes: 14_000, names: 0 });
    // A descriptor open across the cut reads the synced bytes: nothing is served from a cache.
    expect(readFd(fd).equals(synced)).toBe(true);
    closeSync(fd);
    expect(readFileSync(path).equals(synced)).toBe(true);
    expect(fs.counters()).toMatchObject({ pendingFiles: 0, pendingNames: 0 });
  });

  it('fdatasync through a read-only descriptor makes the file durable, as the gateway syncs its WAL', () => {
    const dir = folder();
    const path = join(dir, 'wal');
    writeFileSync(path, bytes(100, 4));
    syncDir(dir);
    const writer = openSync(path, 'r+');
    writeSync(writer, bytes(6000, 5), 0, 6000, 100);
    const reader = openSync(path, 'r');
    fdatasyncSync(reader);
    writeSync(writer, bytes(50, 6), 0, 50, 0); // after the sync: dropped
    fs.cut();
    const expected = Buffer.concat([bytes(100, 4), bytes(6000, 5)]);
    expect(readFileSync(path).equals(expected)).toBe(true);
    closeSync(writer);
    closeSync(reader);
  });

  it('a truncate, or an open with O_TRUNC, after the fsync is undone by the cut', () => {
    const dir = folder();
    const [a, b] = [join(dir, 'a'), join(dir, 'b')];
    const content = bytes(9000, 7);
    for (const path of [a, b]) {
      const fd = openSync(path, 'w');
      writeSync(fd, content);
      fsyncSync(fd);
      closeSync(fd);
    }
    syncDir(dir);
    const fd = openSync(a, 'r+');
    ftruncateSync(fd, 100);
    ftruncateSync(fd, 20_000); // grown again: zeros where the bytes were
    closeSync(fd);
    writeFileSync(b, 'short'); // O_TRUNC
    fs.cut();
    expect(readFileSync(a).equals(content)).toBe(true);
    expect(readFileSync(b).equals(content)).toBe(true);
  });

  it('a new name lasts only once its directory is fsynced; its contents only once the file is', () => {
    const dir = folder();
    const unsyncedName = join(dir, 'unsynced-name');
    const syncedName = join(dir, 'synced-name');
    const fd = openSync(unsyncedName, 'w');
    writeSync(fd, 'data');
    fsyncSync(fd); // the file, not its directory
    closeSync(fd);
    const cut1 = fs.cut();
    expect(cut1.names).toBe(1);
    expect(existsSync(unsyncedName)).toBe(false);

    writeFileSync(syncedName, 'never synced');
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'inside'), 'x');
    syncDir(dir); // syncedName and sub are durable, sub/inside is not
    const cut2 = fs.cut();
    expect(cut2.names).toBe(1);
    expect(readFileSync(syncedName, 'utf8')).toBe('');
    expect(existsSync(join(dir, 'sub'))).toBe(true);
    expect(existsSync(join(dir, 'sub', 'inside'))).toBe(false);
  });

  it('a rename is durable at once; the renamed file keeps only its synced contents', () => {
    const dir = folder();
    const [partial, final] = [join(dir, 'file.partial'), join(dir, 'file')];
    writeFileSync(partial, 'synced');
    const fd = openSync(partial, 'r+');
    fsyncSync(fd);
    syncDir(dir);
    writeSync(fd, 'SYNCED, then more', 0);
    closeSync(fd);
    renameSync(partial, final); // no fsync of the file, none of the folder
    fs.cut();
    expect(existsSync(partial)).toBe(false);
    expect(readFileSync(final, 'utf8')).toBe('synced');
  });

  it('SQLite on the mount, killed: a commit at synchronous=FULL survives the cut, one at NORMAL does not', () => {
    const dir = folder();
    const path = join(dir, 'db.sqlite');
    // A process of its own, SIGKILLed after its commits: closing the database would checkpoint.
    const child = spawnSync(
      process.execPath,
      [
        '-e',
        `const Database = require('better-sqlite3');
         const db = new Database(process.argv[1]);
         db.pragma('journal_mode = WAL');
         db.pragma('synchronous = FULL');
         db.exec('CREATE TABLE t (x TEXT)');
         db.prepare('INSERT INTO t VALUES (?)').run('full');
         db.pragma('synchronous = NORMAL');
         db.prepare('INSERT INTO t VALUES (?)').run('normal');
         process.stdout.write(JSON.stringify(db.prepare('SELECT x FROM t').pluck().all()));
         process.kill(process.pid, 'SIGKILL');`,
        path,
      ],
      { encoding: 'utf8', cwd: join(import.meta.dirname, '..') },
    );
    expect(child.signal, child.stderr).toBe('SIGKILL');
    expect(JSON.parse(child.stdout)).toEqual(['full', 'normal']);
    // The -shm was mapped and written through the mount.
    expect(existsSync(`${path}-shm`)).toBe(true);

    const dropped = fs.cut();
    expect(dropped.bytes).toBeGreaterThan(0);
    const db = new Database(path);
    try {
      expect(db.prepare('SELECT x FROM t').pluck().all()).toEqual(['full']);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  });

  it('any writes, truncates and fsyncs: the file reads as written until the cut, and as at its last fsync after it', () => {
    const dir = folder();
    let run = 0;
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('write' as const),
        offset: fc.integer({ min: 0, max: 20_000 }),
        length: fc.integer({ min: 1, max: 9000 }),
        seed: fc.nat(250),
      }),
      fc.record({
        kind: fc.constant('truncate' as const),
        size: fc.integer({ min: 0, max: 24_000 }),
      }),
      fc.record({ kind: fc.constant('fsync' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 12 }), (ops) => {
        const path = join(dir, `f${++run}`);
        const fd = openSync(path, 'w+');
        fsyncSync(fd);
        syncDir(dir);
        let model = Buffer.alloc(0);
        let durable = model;
        try {
          for (const o of ops) {
            if (o.kind === 'write') {
              const data = bytes(o.length, o.seed);
              writeSync(fd, data, 0, data.length, o.offset);
              const end = Math.max(model.length, o.offset + o.length);
              const next = Buffer.alloc(end);
              model.copy(next);
              data.copy(next, o.offset);
              model = next;
            } else if (o.kind === 'truncate') {
              ftruncateSync(fd, o.size);
              const next = Buffer.alloc(o.size);
              model.copy(next, 0, 0, Math.min(o.size, model.length));
              model = next;
            } else {
              fsyncSync(fd);
              durable = model;
            }
            expect(readFd(fd).equals(model)).toBe(true);
          }
          fs.cut();
          expect(readFd(fd).equals(durable)).toBe(true);
        } finally {
          closeSync(fd);
        }
      }),
      { numRuns: 60 },
    );
  });
});
