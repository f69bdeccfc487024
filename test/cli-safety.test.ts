import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { applySeed, readSeedFile } from '../src/cli/offline/seed.js';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { readConfigFile, parseConfig } from '../src/config/read-config.js';
import { hashPassword } from '../src/ocpp/connection/charger-password.js';
import { openDatabase } from '../src/store/database.js';
import { testConfig, testSeed } from './helpers/gateway.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'cli.js');

let dir: string;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.FLEET_GATEWAY_CONFIG;
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A config whose database is `dbPath`, written to a file of its own. */
function configAt(name: string, dbPath: string): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, stringify({ ...testConfig(dir), database: { path: dbPath } }));
  return path;
}

function seedFile(name: string, content: unknown): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-cli-safety-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('CLI safety', () => {
  it('--version prints the package version', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const res = await cli(flag);
      expect(res.code).toBe(0);
      expect(res.stdout.trim()).toBe(pkg.version);
    }
  });

  it('commands on an existing database refuse a mistyped path instead of creating an empty database', async () => {
    const missing = join(dir, 'typo', 'gatewy.db');
    const config = configAt('missing', missing);
    for (const args of [
      ['ledger', 'verify'],
      ['api-key', 'list', '--fleet', 'fleet-a'],
      ['api-key', 'create', '--fleet', 'fleet-a'],
      ['backup', join(dir, 'never.db')],
    ]) {
      const res = await cli(...args, '--config', config);
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stderr, args.join(' ')).toContain(`no database at ${missing}`);
      expect(res.stdout, args.join(' ')).not.toContain('all invariants hold');
    }
    expect(existsSync(missing)).toBe(false);
    expect(existsSync(join(dir, 'typo'))).toBe(false);
    expect(existsSync(join(dir, 'never.db'))).toBe(false);
  }, 60_000); // four CLI processes: bounded, but slow on a loaded machine

  it('database errors name the file and what to do', async () => {
    const notADb = join(dir, 'garbage.db');
    writeFileSync(notADb, 'this is not SQLite'.repeat(100));
    const res = await cli('ledger', 'verify', '--config', configAt('garbage', notADb));
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`database ${notADb}:`);
    expect(res.stderr).toContain('restore the last backup');

    const underAFile = join(notADb, 'gateway.db'); // a folder that is a file
    const seeded = await cli(
      'seed',
      '--config',
      configAt('under-file', underAFile),
      seedFile('ok', testSeed),
    );
    expect(seeded.code).toBe(1);
    expect(seeded.stderr).toContain(`database ${underAFile}:`);
  });

  it('seed errors are said in words, never as SQL, and change nothing', async () => {
    const dbPath = join(dir, 'seeded.db');
    const config = configAt('seeded', dbPath);
    expect((await cli('seed', '--config', config, seedFile('base', testSeed))).code).toBe(0);
    const driver = (id: string, email: string) => ({ id, email });
    const cases: [string, unknown, string][] = [
      ['bad-json', '{"fleets": [', 'is not valid JSON'],
      [
        'dup-email-in-file',
        {
          fleets: [
            {
              id: 'f',
              name: 'F',
              drivers: [driver('d1', 'same@x.test'), driver('d2', 'Same@x.test')],
            },
          ],
        },
        "fleets.0.drivers.1.email: same@x.test is already driver d1's email in fleet f",
      ],
      [
        'dup-email-in-db',
        {
          fleets: [
            { id: 'fleet-a', name: 'Fleet A', drivers: [driver('drv-new', 'ada@fleet.test')] },
          ],
        },
        'fleet fleet-a, driver drv-new: ada@fleet.test is already the email of driver drv-ada',
      ],
      [
        'driver-of-other-fleet',
        {
          fleets: [{ id: 'fleet-b', name: 'Fleet B', drivers: [driver('drv-ada', 'ada@b.test')] }],
        },
        'driver drv-ada belongs to fleet fleet-a, not fleet-b',
      ],
      [
        'key-of-other-fleet',
        { fleets: [{ id: 'fleet-c', name: 'Fleet C', apiKeys: [testSeed.fleets[0]?.apiKeys[0]] }] },
        'fleet fleet-c, API key 1: it is already registered to fleet fleet-a',
      ],
      [
        'dup-fleet',
        {
          fleets: [
            { id: 'f', name: 'F' },
            { id: 'f', name: 'F again' },
          ],
        },
        'fleet f is listed twice',
      ],
    ];
    // Each case in process (the CLI prints the same message, checked once below)
    const db = openDatabase(dbPath, { mustExist: true });
    try {
      const snapshot = () =>
        JSON.stringify(
          ['fleets', 'drivers', 'api_keys', 'wallets', 'ledger_entries'].map((table) =>
            db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all(),
          ),
        );
      const before = snapshot();
      for (const [name, content, message] of cases) {
        const attempt = () =>
          applySeed(db, readSeedFile(seedFile(name, content)), '2026-01-01T00:00:00.000Z');
        expect(attempt, name).toThrow(message);
        try {
          attempt();
        } catch (err) {
          expect((err as Error).message, name).not.toMatch(/constraint|SQLITE|INSERT|UNIQUE/i);
        }
      }
      // nothing of the refused seeds was applied
      expect(snapshot()).toBe(before);
      expect(verifyLedger(db).ok).toBe(true);
    } finally {
      db.close();
    }
    const [name, content, message] = cases[2] as [string, unknown, string];
    const res = await cli('seed', '--config', config, seedFile(name, content));
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(message);
  });
});

describe('example config placeholders', () => {
  it('config/example.yaml refuses to load until each placeholder is replaced, naming the key', () => {
    const text = readFileSync(join(ROOT, 'config', 'example.yaml'), 'utf8');
    expect(text).not.toContain('scrypt$'); // no shipped password hashes
    const path = join(dir, 'site.yaml');
    const keys: string[] = [];
    let edited = text;
    for (;;) {
      writeFileSync(path, edited);
      let key: string | undefined;
      try {
        readConfigFile(path);
      } catch (err) {
        key = /config key (\S+) still holds a CHANGE-ME placeholder/.exec(
          (err as Error).message,
        )?.[1];
        if (!key) throw err;
      }
      if (!key) break;
      keys.push(key);
      const value = key.endsWith('passwordHash')
        ? hashPassword(`site-charger-password-${keys.length}`)
        : `site-broker-password-${keys.length}`;
      edited = edited.replace(/: CHANGE-ME[\w-]*/, () => `: ${value}`);
    }
    expect(keys).toEqual([
      'chargers.0.passwordHash',
      'chargers.1.passwordHash',
      'uplink.password',
      'alerts.webhook.secret',
    ]);
    expect(readConfigFile(path).siteId).toBe('lagos-depot-01');
  });

  it('the demo configs have no placeholders and load', () => {
    expect(readConfigFile(join(ROOT, 'config', 'demo.yaml')).siteId).toBe('demo-lagos-depot');
    expect(() =>
      parseConfig({
        ...testConfig(dir),
        uplink: { url: 'mqtt://h', username: 'u', password: 'CHANGE-ME' },
      }),
    ).toThrow('config key uplink.password still holds a CHANGE-ME placeholder');
  });
});
