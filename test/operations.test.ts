import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { applySeed } from '../src/cli/offline/seed.js';
import type { GatewayConfigInput } from '../src/config/schema.js';
import { openDatabase, type Db } from '../src/store/database.js';
import { API_KEY, DRIVERS, testConfig, testSeed } from './helpers/gateway.js';
import { spawnGateway, type GatewayProcess, type SpawnOptions } from './helpers/gateway-process.js';
import { errorCode, mintToken, startSession } from './helpers/http.js';
import { IONIQ, ocpp16, type SimulatedChargePoint } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';
import { gatewayHealth } from './helpers/operator.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');

let dir: string;
let dbPath: string;
let db: Db;
const gateways: GatewayProcess[] = [];
const chargers: SimulatedChargePoint[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-ops-'));
  dbPath = join(dir, 'gateway.db');
  db = openDatabase(dbPath);
  applySeed(db, testSeed, new Date().toISOString());
});
afterEach(async () => {
  await Promise.all(chargers.splice(0).map((c) => c.disconnect()));
  await Promise.all(gateways.splice(0).map((g) => g.kill()));
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function writeConfig(overrides: Partial<GatewayConfigInput> = {}, at = dir): string {
  const path = join(at, 'gateway.yaml');
  writeFileSync(path, stringify(testConfig(at, overrides)));
  return path;
}

async function gateway(
  configPath: string,
  lines: string[] = [],
  options: SpawnOptions = {},
): Promise<GatewayProcess> {
  const g = await spawnGateway(configPath, lines, {}, options);
  gateways.push(g);
  return g;
}

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as unknown };
}

const balanceIn = (d: Db, driverId: string) =>
  (
    d.prepare('SELECT balance FROM wallets WHERE driver_id = ?').get(driverId) as {
      balance: number;
    }
  ).balance;
const stateIn = (d: Db, sessionId: string) =>
  (d.prepare('SELECT state FROM sessions WHERE id = ?').get(sessionId) as { state: string }).state;

/** A session of Ada's on CP-1 connector 1 that is charging. */
async function chargingSession(g: GatewayProcess, amount: number): Promise<string> {
  const cp = await ocpp16.connect(g.ocppUrl, 'CP-1');
  chargers.push(cp);
  await cp.plugIn(1, IONIQ);
  const token = await mintToken(g.url, API_KEY, DRIVERS.ada.email);
  const started = cp.waitFor('transactionStarted', (e) => e.connectorId === 1);
  const res = await startSession(
    g.url,
    token,
    { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
    amount,
  );
  expect(res.status).toBe(200);
  await started;
  const { sessionId } = res.body as { sessionId: string };
  await waitUntil(() => stateIn(db, sessionId) === 'charging', 10_000, 'charging');
  return sessionId;
}

describe('one gateway per database', () => {
  it('a second serve is refused naming the database and the holder pid; a SIGKILLed holder leaves no stale lock', async () => {
    const configPath = writeConfig();
    const first = await gateway(configPath);
    const second = await cli('serve', '--config', configPath);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`database ${dbPath} is in use by another gateway`);
    expect(second.stderr).toContain(`pid ${first.child.pid}`);
    // the running gateway's database still serves readers (ledger verify, backup)
    const verify = await cli('ledger', 'verify', '--config', configPath);
    expect(verify.code).toBe(0);

    await first.kill(); // SIGKILL: no cleanup ran
    const next = await gateway(configPath);
    expect((await getJson(`${next.url}/readyz`)).status).toBe(200);
  });
});

describe('readiness beside liveness', () => {
  it('/readyz answers 503 not_ready naming the database when a write fails (file size limit: a full disk), while /healthz stays ok', async () => {
    const configPath = writeConfig();
    // The gateway may not grow any file beyond 1 MiB. The migrations and the seed leave most of a
    // megabyte in the WAL: folded into the database file first, every file starts far below it.
    db.pragma('wal_checkpoint(TRUNCATE)');
    const g = await gateway(configPath, [], { fileSizeLimitKiB: 1024 });
    expect(await getJson(`${g.url}/readyz`)).toEqual({ status: 200, body: { status: 'ready' } });

    // Another writer (this test, without the limit) grows the WAL past 1 MiB: the gateway's
    // next write lands beyond its limit and fails, as it would on a full disk.
    db.prepare(
      "INSERT INTO ocpp_events (charger_id, action, note, at) VALUES ('X', 'fill', ?, '2026-01-01T00:00:00.000Z')",
    ).run('x'.repeat(2_000_000));
    // the probe's answer is reused for at most a second
    const ready = await waitUntil(
      async () => {
        const r = await fetch(`${g.url}/readyz`);
        return r.status === 503
          ? { status: r.status, body: (await r.json()) as unknown }
          : undefined;
      },
      5000,
      'readyz 503',
    );
    expect(errorCode({ status: ready.status, headers: new Headers(), body: ready.body })).toBe(
      'not_ready',
    );
    expect((ready.body as { error: { message: string } }).error.message).toContain(
      `database ${dbPath} cannot be written`,
    );
    const health = await getJson(`${g.url}/healthz`);
    expect(health.status).toBe(200);
    expect((health.body as { status: string }).status).toBe('ok');
  });
});

describe('backup while the gateway runs', () => {
  it('backs up mid-session; the copy restored to a fresh path passes ledger verify and holds the balances', async () => {
    const configPath = writeConfig();
    const g = await gateway(configPath);
    const amount = 20_000;
    const sessionId = await chargingSession(g, amount);

    const backupPath = join(dir, 'backup', 'gateway-backup.db');
    mkdirSync(join(dir, 'backup'));
    const res = await cli('backup', '--config', configPath, backupPath);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`to ${backupPath}`);
    expect(res.stdout).toContain('1 open sessions');
    // a second backup to the same file is refused, the first one is left as it was
    const again = await cli('backup', '--config', configPath, backupPath);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`backup file ${backupPath} already exists`);

    // restore: the copy at a fresh database.path
    const restoreDir = join(dir, 'restored');
    mkdirSync(restoreDir);
    copyFileSync(backupPath, join(restoreDir, 'gateway.db'));
    const restoredConfig = writeConfig({}, restoreDir);
    const verify = await cli('ledger', 'verify', '--config', restoredConfig);
    expect(verify.stdout).toContain('all invariants hold');
    expect(verify.code).toBe(0);
    const restored = openDatabase(join(restoreDir, 'gateway.db'), { mustExist: true });
    try {
      expect(balanceIn(restored, DRIVERS.ada.id)).toBe(DRIVERS.ada.balance - amount);
      expect(balanceIn(restored, DRIVERS.bola.id)).toBe(DRIVERS.bola.balance);
      expect(stateIn(restored, sessionId)).toBe('charging');
    } finally {
      restored.close();
    }
  });
});

describe('drain and graceful stop', () => {
  it('SIGTERM with shutdown.drainTimeoutSeconds refuses new Starts (503 gateway_draining), reports the open session, and stops once it has ended', async () => {
    const lines: string[] = [];
    const g = await gateway(writeConfig({ shutdown: { drainTimeoutSeconds: 120 } }), lines);
    const sessionId = await chargingSession(g, 20_000);
    const exited = new Promise<number | null>((r) => g.child.once('exit', (code) => r(code)));

    g.child.kill('SIGTERM');
    await waitUntil(
      () => lines.some((l) => l.includes('draining: new Starts refused')),
      5000,
      'drain',
    );
    const bola = await mintToken(g.url, API_KEY, DRIVERS.bola.email);
    const refused = await startSession(
      g.url,
      bola,
      { chargerId: 'CP-1', connectorId: '2', driverEmail: DRIVERS.bola.email },
      1000,
    );
    expect(refused.status).toBe(503);
    expect(errorCode(refused)).toBe('gateway_draining');
    expect(balanceIn(db, DRIVERS.bola.id)).toBe(DRIVERS.bola.balance);

    const ready = await fetch(`${g.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { error: { message: string } }).error.message).toContain(
      'draining',
    );
    const health = await gatewayHealth<{
      drain: { state: string; openSessions: { sessionId: string; chargerId: string }[] };
    }>(g.url, db);
    expect(health.drain.state).toBe('draining');
    expect(health.drain.openSessions).toEqual([
      expect.objectContaining({
        sessionId,
        chargerId: 'CP-1',
        connectorId: '1',
        state: 'charging',
      }),
    ]);

    // the driver unplugs: the session settles, the drain is over, the gateway stops by itself
    await chargers[0]?.unplug(1);
    expect(await exited).toBe(0);
    expect(stateIn(db, sessionId)).toBe('settled');
    expect(lines.some((l) => l.includes('drained: no open sessions'))).toBe(true);
    expect(lines.some((l) => l.includes('open sessions: their chargers keep charging'))).toBe(
      false,
    );
  });

  it('a stop without drain logs each open session (id, charger, connector, state, energy) and that it resumes on restart', async () => {
    const lines: string[] = [];
    const g = await gateway(writeConfig(), lines);
    const sessionId = await chargingSession(g, 20_000);
    const exited = new Promise<number | null>((r) => g.child.once('exit', (code) => r(code)));
    g.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const line = lines.find((l) => l.includes('open sessions: their chargers keep charging'));
    expect(line).toBeDefined();
    const logged = JSON.parse(line as string) as {
      msg: string;
      openSessions: Record<string, unknown>[];
    };
    expect(logged.msg).toContain('resume');
    expect(logged.openSessions).toEqual([
      {
        sessionId,
        chargerId: 'CP-1',
        connectorId: '1',
        state: 'charging',
        deliveredWh: expect.any(Number) as number,
      },
    ]);
  });
});
