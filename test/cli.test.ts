import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { verifyPassword } from '../src/ocpp/connection/charger-password.js';
import { openDatabase } from '../src/store/database.js';
import { testConfig, testSeed } from './helpers/gateway.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');

let dir: string;
let configPath: string;
let seedPath: string;

async function cliWithEnv(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      env: { ...withoutConfigVariable(process.env), ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const cli = (...args: string[]) => cliWithEnv({}, ...args);

function withoutConfigVariable(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.FLEET_GATEWAY_CONFIG;
  return copy;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-cli-'));
  configPath = join(dir, 'gateway.yaml');
  writeFileSync(configPath, stringify(testConfig(dir)));
  seedPath = join(dir, 'seed.json');
  writeFileSync(seedPath, JSON.stringify(testSeed));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fleet-gateway CLI', () => {
  it('has --help on every command', async () => {
    for (const args of [
      [],
      ['serve'],
      ['seed'],
      ['ledger'],
      ['ledger', 'verify'],
      ['api-key', 'create'],
      ['hash-password'],
      ['charger-key'],
      ['demo'],
    ]) {
      const res = await cli(...args, '--help');
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.stdout).toContain('Usage: fleet-gateway');
    }
  });

  it('seed is idempotent: the second run changes nothing', async () => {
    const first = await cli('seed', '--config', configPath, seedPath);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('2 fleets, 2 API keys, 4 drivers, 4 opening balances');
    const db = openDatabase(join(dir, 'gateway.db'));
    const snapshot = () =>
      JSON.stringify([
        db.prepare('SELECT * FROM wallets ORDER BY driver_id').all(),
        db.prepare('SELECT count(*) FROM ledger_entries').get(),
        db.prepare('SELECT * FROM drivers ORDER BY id').all(),
        db.prepare('SELECT * FROM api_keys ORDER BY key_hash').all(),
      ]);
    const before = snapshot();
    const second = await cli('seed', '--config', configPath, seedPath);
    expect(second.stdout).toContain('0 fleets, 0 API keys, 0 drivers, 0 opening balances');
    expect(snapshot()).toBe(before);
    const keys = db.prepare('SELECT key_hash FROM api_keys').all() as { key_hash: string }[];
    for (const k of keys) expect(k.key_hash).toMatch(/^[0-9a-f]{64}$/);
    db.close();
  });

  it('ledger verify prints what it checked and exits 0 on a sound ledger', async () => {
    const res = await cli('ledger', 'verify', '--config', configPath);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('ok   every balance equals the sum of its ledger entries');
    expect(res.stdout).toContain('ledger verified');
    expect(res.stdout).toMatch(/wallets 4, ledger entries 4/);
  });

  it('takes the config file from FLEET_GATEWAY_CONFIG when --config is not given', async () => {
    const res = await cliWithEnv({ FLEET_GATEWAY_CONFIG: configPath }, 'ledger', 'verify');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('ledger verified');
    for (const env of [{}, { FLEET_GATEWAY_CONFIG: ' ' }] as Record<string, string>[]) {
      const none = await cliWithEnv(env, 'ledger', 'verify');
      expect(none.code).not.toBe(0);
      expect(none.stderr).toContain('--config');
    }
  });

  it('ledger verify exits 1 when a balance does not match its ledger', async () => {
    const broken = join(dir, 'broken');
    const cfg = join(dir, 'broken.yaml');
    writeFileSync(cfg, stringify(testConfig(broken)));
    await cli('seed', '--config', cfg, seedPath);
    const db = openDatabase(join(broken, 'gateway.db'));
    // Tamper behind the schema's back, as a bad restore or a hand edit would.
    db.exec(
      "DROP TRIGGER ledger_apply; UPDATE wallets SET balance = balance + 1 WHERE driver_id = 'drv-ada'",
    );
    db.close();
    const res = await cli('ledger', 'verify', '--config', cfg);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain('FAIL every balance equals the sum of its ledger entries');
    expect(res.stdout).toContain('drv-ada');
  });

  it('a bad config gets one clear line naming the key', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, stringify({ ...testConfig(dir), http: { port: 'eighty' } }));
    const res = await cli('ledger', 'verify', '--config', bad);
    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toContain('config key http.port');

    writeFileSync(
      bad,
      stringify({
        ...testConfig(dir),
        chargers: [
          { id: 'X', passwordHash: 'scrypt$x', connectors: [{ id: '1', tariff: 'nope' }] },
        ],
      }),
    );
    const tariff = await cli('ledger', 'verify', '--config', bad);
    expect(tariff.stderr).toContain(
      'config key chargers.0.connectors.0.tariff: no tariff named nope',
    );

    const missing = await cli('ledger', 'verify', '--config', join(dir, 'nope.yaml'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot read config file');
  });

  it('hash-password makes an scrypt hash the gateway verifies, and refuses short passwords', async () => {
    const res = await cli('hash-password', 'a-charger-password-123');
    expect(res.code).toBe(0);
    expect(await verifyPassword('a-charger-password-123', res.stdout.trim())).toBe(true);
    expect(await verifyPassword('another-password-1234', res.stdout.trim())).toBe(false);
    expect((await cli('hash-password', 'short')).code).toBe(1);
  });

  it('charger-key prints a generated key and its hash, which verifies it and nothing else', async () => {
    const res = await cli('charger-key');
    expect(res.code).toBe(0);
    const key = /^password[^:]*: (\S+)$/m.exec(res.stdout)?.[1];
    const hash = /^passwordHash[^:]*: (\S+)$/m.exec(res.stdout)?.[1];
    expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(hash).toMatch(/^hmac-sha256\$/);
    expect(await verifyPassword(key as string, hash as string)).toBe(true);
    expect(await verifyPassword('a-charger-password-123', hash as string)).toBe(false);
    const again = await cli('charger-key');
    expect(again.stdout).not.toContain(key as string);
  });

  it('api-key create prints a new key once and stores only its hash', async () => {
    const res = await cli('api-key', 'create', '--config', configPath, '--fleet', 'fleet-a');
    expect(res.code).toBe(0);
    const key = res.stdout.trim();
    expect(key).toMatch(/^fgk_/);
    const db = openDatabase(join(dir, 'gateway.db'));
    const all = JSON.stringify(db.prepare('SELECT * FROM api_keys').all());
    db.close();
    expect(all).not.toContain(key);
  });
});
