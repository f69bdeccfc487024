import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { applySeed } from '../../src/cli/offline/seed.js';
import { verifyLedger, type LedgerReport } from '../../src/cli/offline/verify-ledger.js';
import { parseConfig } from '../../src/config/read-config.js';
import type { GatewayConfigInput } from '../../src/config/schema.js';
import type { KillPoint } from '../../src/shared/kill-points.js';
import { openDatabase } from '../../src/store/database.js';
import { ChargePoint16 } from '../../simulators/ocpp16/charge-point.js';
import { ChargePoint201 } from '../../simulators/ocpp201/charge-point.js';
import type {
  ChargePointOptions,
  SimulatedChargePoint,
} from '../../simulators/shared/simulated-charge-point.js';
import { API_KEY, CHARGER_PASSWORD, DRIVERS, testConfig, testSeed } from './gateway.js';
import { spawnGateway, type GatewayProcess } from './gateway-process.js';
import { bearer, mintToken, post, type JsonResponse } from './http.js';
import { IONIQ } from './simulated-charger.js';
import { waitUntil } from './wait.js';

export type CrashProtocol = 'ocpp1.6' | 'ocpp2.0.1';

export interface CrashCase {
  point: KillPoint;
  protocol: CrashProtocol;
  seed: number;
}

/** How the run reaches its kill point: a refund from a refusing charger or from an EV that never came. */
export function refundPath(c: CrashCase): 'reject' | 'no_ev' {
  return choices(c).refundVia;
}

function choices(c: CrashCase) {
  const random = seededRandom(c.seed * 7919 + c.point.length * 104729);
  return {
    amount: 500 + Math.floor(random() * 2500),
    refundVia: random() < 0.5 ? ('reject' as const) : ('no_ev' as const),
    stopVia: random() < 0.5 ? ('driver' as const) : ('paid_energy' as const),
  };
}

/** What one run saw, for the test to assert on and to print when it fails. */
export interface CrashRunResult {
  diedAtPoint: boolean;
  /** Remote starts the charger received from the process that was killed. */
  remoteStartsBeforeKill: number;
  report: LedgerReport;
  sessions: {
    id: string;
    state: string;
    amount: number;
    cost: number | null;
    delivered_wh: number | null;
    end_reason: string | null;
    authorized_at: string | null;
  }[];
  debits: number;
  balance: number;
  /** Energy the charger's own register moved on connector 1 during the run. */
  chargerDeliveredWh: number;
  firstResponse: JsonResponse | 'died';
  finalRetry: JsonResponse;
  notes: string[];
}

/** Small seeded PRNG (mulberry32): a failing seed replays exactly the same choices. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

function simulator(protocol: CrashProtocol, options: ChargePointOptions): SimulatedChargePoint {
  return protocol === 'ocpp1.6' ? new ChargePoint16(options) : new ChargePoint201(options);
}

const TARGET = { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email };

/** Writes `gateway.yaml` into `dir` and seeds its database, for `fleet-gateway serve` to run on. */
export function gatewayFiles(
  dir: string,
  input: GatewayConfigInput,
): { configPath: string; dbPath: string } {
  const configPath = join(dir, 'gateway.yaml');
  writeFileSync(configPath, stringify(input));
  const dbPath = parseConfig(input, dir).database.path;
  const seedDb = openDatabase(dbPath);
  applySeed(seedDb, testSeed, new Date().toISOString());
  seedDb.close();
  return { configPath, dbPath };
}

/**
 * One crash run: a real gateway child process armed to SIGKILL itself at `point`, driven by a
 * simulated charger through a Start (with an Idempotency-Key) and, for settlement points, to the
 * charger's stop; then a second process on the same database and port, the charger reconnecting
 * (and redelivering what it had not got an answer for), the Start retried with the same key, and
 * every session driven to its end. The seed picks the amount and the path to the kill point.
 */
export async function crashRun(c: CrashCase): Promise<CrashRunResult> {
  const notes: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-crash-'));
  const port = await freePort();
  const input = testConfig(dir, {
    http: { host: '127.0.0.1', port },
    ocpp: { meterSampleIntervalSeconds: 10, callTimeoutSeconds: 2 },
    sessions: { startTimeoutSeconds: 3, maxAmount: 1_000_000, stopLeadMilliseconds: 0 },
    log: { level: 'info' },
  });
  const { configPath, dbPath } = gatewayFiles(dir, input);

  const { amount, refundVia, stopVia } = choices(c);
  const refundPoint = c.point.startsWith('refund.');
  const settlePoint = c.point.startsWith('settle.');
  notes.push(`amount ${amount}`);
  if (refundPoint) notes.push(`refund via ${refundVia}`);
  if (settlePoint) notes.push(`stop via ${stopVia}`);

  const lines: string[] = [];
  const processes: GatewayProcess[] = [];
  const cp = simulator(c.protocol, {
    url: `ws://127.0.0.1:${port}/ocpp`,
    identity: 'CP-1',
    password: CHARGER_PASSWORD,
    connectors: 2,
    maxPowerW: 150_000,
    timeFactor: 120,
    callTimeoutMs: 2000,
    remoteStart: refundPoint && refundVia === 'reject' ? 'reject' : 'accept',
  });
  try {
    let remoteStarts = 0;
    cp.on('remoteStart', () => remoteStarts++);
    const first = await spawnGateway(configPath, lines, { FLEETGW_KILL_AT: c.point });
    processes.push(first);
    const exited = new Promise<void>((r) => first.child.once('exit', () => r()));
    // The gateway configures the charger after its boot; the last setting is the EV timeout.
    const configured = cp.waitFor('configurationChanged', (e) => /ConnectionTimeOut/.test(e.key));
    await cp.connect();
    await configured;
    const dropped = cp.waitFor('disconnected', () => true, 30_000);
    if (!(refundPoint && refundVia === 'no_ev')) await cp.plugIn(1, IONIQ);
    const registerBefore = cp.state(1).registerWh;

    const key = `crash-${c.point}-${c.seed}`;
    const token = await mintToken(first.url, API_KEY, DRIVERS.ada.email);
    const startOnce = (url: string, bearerToken: string) =>
      post(
        url,
        '/v1/sessions',
        { ...TARGET, amount },
        {
          ...bearer(bearerToken),
          'idempotency-key': key,
        },
      );
    // Listening before the Start: a charger may start the transaction before its answer arrives.
    const started = settlePoint ? cp.waitFor('transactionStarted', () => true, 10_000) : undefined;
    const firstResponse = await startOnce(first.url, token).catch(() => 'died' as const);
    if (started) {
      await started;
      if (stopVia === 'driver') await cp.interrupt(1, 'Local');
    }
    await waitUntilExit(exited, 20_000, c.point);
    // TCP delivers what the dead process had sent before its close: once the charger has seen the
    // link drop, it has seen every frame the killed process sent.
    await dropped;
    const remoteStartsBeforeKill = remoteStarts;
    const diedAtPoint = lines.some(
      (l) => l.includes('"kill point reached"') && l.includes(`"${c.point}"`),
    );

    // The operator (or systemd) starts the gateway again on the same database.
    const reconnected = cp.waitFor('reconnected', () => true, 20_000);
    const second = await spawnGateway(configPath, lines);
    processes.push(second);
    await reconnected;
    const token2 = await waitUntil(
      () => mintToken(second.url, API_KEY, DRIVERS.ada.email).catch(() => undefined),
      10_000,
      'a token from the restarted gateway',
    );
    // The app retries the Start it never got an answer to (or got one for): same key, same body.
    const retry = await startOnce(second.url, token2);
    notes.push(`retry after restart: ${retry.status}`);

    const db = openDatabase(dbPath);
    try {
      const open = () =>
        (
          db
            .prepare(
              "SELECT count(*) AS n FROM sessions WHERE state NOT IN ('settled', 'refunded')",
            )
            .get() as { n: number }
        ).n;
      // Every session must reach its one outcome by itself: a charging one when the gateway stops
      // it at the paid energy (or the charger's redelivered stop arrives), a half-way one when
      // the start timer gives up.
      await waitUntil(() => open() === 0, 30_000, `every session of ${c.point} ending`);
      const finalRetry = await startOnce(second.url, token2);
      const sessions = db
        .prepare(
          'SELECT id, state, amount, cost, delivered_wh, end_reason, authorized_at FROM sessions',
        )
        .all() as CrashRunResult['sessions'];
      const debits = (
        db
          .prepare("SELECT count(*) AS n FROM ledger_entries WHERE kind = 'session_debit'")
          .get() as { n: number }
      ).n;
      const balance = (
        db.prepare('SELECT balance FROM wallets WHERE driver_id = ?').get(DRIVERS.ada.id) as {
          balance: number;
        }
      ).balance;
      return {
        diedAtPoint,
        remoteStartsBeforeKill,
        report: verifyLedger(db),
        sessions,
        debits,
        balance,
        chargerDeliveredWh: cp.state(1).registerWh - registerBefore,
        firstResponse,
        finalRetry,
        notes,
      };
    } finally {
      db.close();
    }
  } finally {
    await cp.disconnect().catch(() => undefined);
    await Promise.all(processes.map((p) => p.kill()));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function waitUntilExit(exited: Promise<void>, ms: number, point: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the gateway never reached ${point}`)), ms);
  });
  try {
    await Promise.race([exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
