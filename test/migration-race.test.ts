import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const databaseModule = pathToFileURL(resolve('dist/store/database.js')).href;

/** Opens (and so migrates) the database in a process of its own; its exit code and output. */
function openInChild(path: string): Promise<{ code: number | null; out: string }> {
  const script =
    `import { openDatabase } from ${JSON.stringify(databaseModule)};` +
    `const db = openDatabase(${JSON.stringify(path)});` +
    `console.log(db.pragma('user_version', { simple: true })); db.close();`;
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => done({ code, out: out.trim() }));
  });
}

describe('migrations', () => {
  it('three processes opening one new database at once each find it fully migrated', async () => {
    // A gateway starting while a CLI command (seed, operator create) opens the same new file: the
    // version read outside the migration's write lock let both run the first step.
    // Also the switch to WAL, which SQLite refuses at once (SQLITE_BUSY) while another holds a lock.
    for (let round = 0; round < 20; round++) {
      const path = join(mkdtempSync(join(tmpdir(), 'fgw-migrate-')), 'gateway.db');
      const results = await Promise.all([openInChild(path), openInChild(path), openInChild(path)]);
      const versions = new Set(results.map((r) => r.out));
      expect(results.map((r) => r.code)).toEqual([0, 0, 0]);
      expect(versions.size).toBe(1);
      expect(Number([...versions][0])).toBeGreaterThan(0);
    }
  }, 120_000);
});
