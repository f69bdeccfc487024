import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');

let t: TestGateway;
let credentialFile: string;
let configPath: string;

async function cli(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = { ...process.env };
  delete base.FLEET_GATEWAY_OPERATOR_CREDENTIAL;
  delete base.FLEET_GATEWAY_OPERATOR_CREDENTIAL_FILE;
  delete base.FLEET_GATEWAY_CONFIG;
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      env: { ...base, FLEET_GATEWAY_OPERATOR_URL: t.gw.operatorUrl, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
const asOperator = (...args: string[]) =>
  cli({ FLEET_GATEWAY_OPERATOR_CREDENTIAL_FILE: credentialFile }, ...args);

beforeAll(async () => {
  // Tariffs in the database, so `tariff set` changes them.
  t = await startTestGateway({ pricing: { tariffSource: 'database' } });
  configPath = join(t.dir, 'gateway.yaml');
  writeFileSync(configPath, stringify(t.configInput));
  // The credential comes from `operator create` against the same database file.
  const created = await cli(
    {},
    'operator',
    'create',
    '--config',
    configPath,
    '--name',
    'ops',
    '--role',
    'operator',
  );
  expect(created.code).toBe(0);
  credentialFile = join(t.dir, 'operator.credential');
  writeFileSync(credentialFile, created.stdout);
});
afterAll(async () => t.close());

// Each test runs the CLI as its own process up to nine times (Node and the CLI loaded each time):
// 10-12 s in CI's runs, once over the suite's 30 s locally while the money simulation and the
// crash sweep ran beside it. The checks are about what the CLI prints, not how fast it starts.
describe('operator CLI against a running gateway', { timeout: 60_000 }, () => {
  it('operator create/list/revoke manage credentials; the credential is printed once', async () => {
    const viewer = await cli(
      {},
      'operator',
      'create',
      '--config',
      configPath,
      '--name',
      'watch',
      '--role',
      'viewer',
    );
    expect(viewer.stdout.trim()).toMatch(/^fop_[A-Za-z0-9_-]{43}$/);
    const list = await cli({}, 'operator', 'list', '--config', configPath);
    expect(list.stdout).toMatch(/^ops {2}operator .* active$/m);
    expect(list.stdout).toMatch(/^watch {2}viewer .* active$/m);
    expect(list.stdout).not.toContain('fop_');
    const dup = await cli(
      {},
      'operator',
      'create',
      '--config',
      configPath,
      '--name',
      'watch',
      '--role',
      'viewer',
    );
    expect(dup.code).toBe(1);
    const badRole = await cli(
      {},
      'operator',
      'create',
      '--config',
      configPath,
      '--name',
      'x',
      '--role',
      'admin',
    );
    expect(badRole.code).not.toBe(0);

    const token = viewer.stdout.trim();
    const ok = await cli({ FLEET_GATEWAY_OPERATOR_CREDENTIAL: token }, 'status', '--json');
    expect(ok.code).toBe(0);
    const refused = await cli(
      { FLEET_GATEWAY_OPERATOR_CREDENTIAL: token },
      'wallet',
      'top-up',
      DRIVERS.ada.id,
      '100',
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/viewer role cannot/);
    expect((await cli({}, 'operator', 'revoke', '--config', configPath, 'watch')).code).toBe(0);
    const after = await cli({ FLEET_GATEWAY_OPERATOR_CREDENTIAL: token }, 'status');
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/not valid/);
  });

  it('status, chargers, drivers: readable tables, or JSON with --json', async () => {
    const status = await asOperator('status');
    expect(status.stdout).toMatch(/^siteId: test-site$/m);
    const json = JSON.parse((await asOperator('status', '--json')).stdout) as { chargers: number };
    expect(json.chargers).toBe(3);
    const chargers = await asOperator('chargers', 'list');
    expect(chargers.stdout.split('\n')[0]).toMatch(/^chargerId +connected +protocol/);
    expect(chargers.stdout).toMatch(/^CP-1 +false/m);
    const show = await asOperator('chargers', 'show', 'CP-1');
    expect(show.stdout).toMatch(/^chargerId: CP-1$/m);
    const drivers = await asOperator('drivers', 'list', '--fleet', 'fleet-b');
    expect(drivers.stdout).toMatch(
      new RegExp(
        `^${DRIVERS.other.id} +fleet-b +${DRIVERS.other.email} +true +${DRIVERS.other.balance}`,
        'm',
      ),
    );
  });

  it('wallet top-up and adjust move money once per request id and never below zero', async () => {
    const before = (
      t.gw.db.prepare('SELECT balance FROM wallets WHERE driver_id = ?').get(DRIVERS.bola.id) as {
        balance: number;
      }
    ).balance;
    const top = await asOperator(
      'wallet',
      'top-up',
      DRIVERS.bola.id,
      '700',
      '--reason',
      'cash',
      '--request-id',
      'cli-1',
      '--json',
    );
    expect(top.code).toBe(0);
    expect(JSON.parse(top.stdout)).toMatchObject({ amount: 700, balanceAfter: before + 700 });
    const again = await asOperator(
      'wallet',
      'top-up',
      DRIVERS.bola.id,
      '700',
      '--reason',
      'cash',
      '--request-id',
      'cli-1',
    );
    expect(again.stdout).toMatch(new RegExp(`^balanceAfter: ${before + 700}$`, 'm'));
    const adjust = await asOperator(
      'wallet',
      'adjust',
      DRIVERS.bola.id,
      `-${before + 701}`,
      '--reason',
      'oops',
    );
    expect(adjust.code).toBe(1);
    expect(adjust.stderr).toMatch(/cannot be debited/);
    const noReason = await asOperator('wallet', 'adjust', DRIVERS.bola.id, '-5');
    expect(noReason.code).toBe(1);
    const badAmount = await asOperator('wallet', 'top-up', DRIVERS.bola.id, '1.5');
    expect(badAmount.code).toBe(1);
    expect(
      (
        t.gw.db.prepare('SELECT balance FROM wallets WHERE driver_id = ?').get(DRIVERS.bola.id) as {
          balance: number;
        }
      ).balance,
    ).toBe(before + 700);
  });

  it('drivers set/deactivate, sessions and session', async () => {
    const set = await asOperator(
      'drivers',
      'set',
      'drv-cli',
      '--fleet',
      'fleet-a',
      '--email',
      'cli@fleet.test',
      '--vehicle',
      'Kia EV6',
      '--battery-kwh',
      '77.4',
    );
    expect(set.stdout).toMatch(/^created: true$/m);
    expect((await asOperator('drivers', 'deactivate', 'drv-cli')).stdout).toMatch(
      /^changed: true$/m,
    );
    const sessions = await asOperator('sessions', '--state', 'settled');
    expect(sessions.code).toBe(0);
    expect(sessions.stdout.split('\n')[0]).toMatch(/^sessionId +state/);
    const missing = await asOperator('session', 'nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no session with id nope/);
  });

  it('says where the credential goes when there is none, and when the gateway is unreachable', async () => {
    const none = await cli({}, 'status');
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/FLEET_GATEWAY_OPERATOR_CREDENTIAL/);
    const down = await cli(
      {
        FLEET_GATEWAY_OPERATOR_CREDENTIAL_FILE: credentialFile,
        FLEET_GATEWAY_OPERATOR_URL: 'http://127.0.0.1:1',
      },
      'status',
    );
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/cannot reach/);
  });

  it('tariffs, tariff set/show/delete: time-of-day windows from the command line', async () => {
    const list = await asOperator('tariffs');
    expect(list.stdout).toMatch(/^dc +1 +412\.5 +0 +412\.5 +2$/m);
    expect(list.stdout).toMatch(/kept in the database; windows in Africa\/Lagos/);
    const set = await asOperator(
      'tariff',
      'set',
      'evening',
      '300',
      '--window',
      'mon,tue,wed,thu,fri 18:00-22:00 450',
      '--window',
      'sat,sun 22:00-06:00 200.5',
    );
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/^evening \(version 1, set by ops at /m);
    expect(set.stdout).toMatch(/^window: sat,sun 22:00-06:00 200\.5 NGN\/kWh$/m);
    const shown = JSON.parse((await asOperator('tariff', 'show', 'evening', '--json')).stdout) as {
      windows: unknown[];
      now: { until: string };
    };
    expect(shown.windows).toHaveLength(2);
    expect(Date.parse(shown.now.until)).toBeGreaterThan(Date.now());
    const badWindow = await asOperator('tariff', 'set', 'x', '300', '--window', 'weekdays 6pm 450');
    expect(badWindow.code).not.toBe(0);
    expect(badWindow.stderr).toMatch(/give days, times and NGN\/kWh/);
    const inUse = await asOperator('tariff', 'delete', 'dc');
    expect(inUse.code).toBe(1);
    expect(inUse.stderr).toMatch(/CP-1\/1/);
    expect((await asOperator('tariff', 'delete', 'evening')).stdout).toMatch(
      /tariff evening deleted/,
    );
  });
});
