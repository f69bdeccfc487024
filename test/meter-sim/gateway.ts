import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GatewayConfigInput } from '../../src/config/schema.js';
import { openDatabase } from '../../src/store/database.js';
import { gatewayFiles } from '../helpers/crash-run.js';
import { startTestGateway, testChargers, testConfig } from '../helpers/gateway.js';
import { spawnGateway, type GatewayProcess } from '../helpers/gateway-process.js';
import { freePort } from '../helpers/mqtt-broker.js';

type Db = ReturnType<typeof openDatabase>;

/**
 * The gateway a run drives: in-process when nothing kills it (it starts faster), else
 * `fleet-gateway serve` as a child process (built dist) that the run can SIGKILL and start again
 * on the same database and port.
 */
export interface SimGateway {
  readonly url: string;
  readonly ocppUrl: string;
  /** Runs `read` on the gateway's database (its own connection for the in-process one). */
  read<T>(read: (db: Db) => T): T;
  /** SIGKILL, then a new process on the same database and port after `downMs`. */
  killAndRestart(downMs: number): Promise<void>;
  /** Every log line so far. */
  lines(): string[];
  close(): Promise<void>;
}

/** The run's settings: the test gateway's, with fast stop retries and checks and the run's bound. */
function overrides(maxPowerKw: number | undefined): Partial<GatewayConfigInput> {
  const { ocpp, sessions } = testConfig('.');
  return {
    // Replayed queues arrive as bursts; the rate limit is not what this tests.
    ocpp: {
      ...ocpp,
      meterSampleIntervalSeconds: 1,
      messageRate: { perSecond: 10_000, burst: 100_000 },
    },
    sessions: {
      ...sessions,
      // A start the gateway refused is refunded without waiting long (its refund is not what this tests).
      startTimeoutSeconds: 2,
      stopRetrySeconds: 0.05,
      stopVerifySeconds: 1,
      recoveryWaitSeconds: 10,
    },
    chargers: testChargers(maxPowerKw),
    log: { level: 'warn' },
  };
}

export async function startSimGateway(
  killable: boolean,
  maxPowerKw: number | undefined,
): Promise<SimGateway> {
  if (!killable) {
    const t = await startTestGateway(overrides(maxPowerKw));
    return {
      url: t.gw.url,
      ocppUrl: t.gw.ocppUrl,
      read: (read) => read(t.gw.db),
      killAndRestart: () => Promise.reject(new Error('an in-process gateway is not killed')),
      lines: () => t.logLines,
      close: () => t.close(),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-meter-'));
  const port = await freePort();
  const input = testConfig(dir, {
    ...overrides(maxPowerKw),
    http: { host: '127.0.0.1', port },
    log: { level: 'info' },
  });
  const { configPath, dbPath } = gatewayFiles(dir, input);
  const lines: string[] = [];
  let child: GatewayProcess = await spawnGateway(configPath, lines).catch((err: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  let restarting: Promise<void> | null = null;
  return {
    url: child.url,
    ocppUrl: child.ocppUrl,
    read(read) {
      const db = openDatabase(dbPath);
      try {
        return read(db);
      } finally {
        db.close();
      }
    },
    killAndRestart(downMs) {
      restarting = (async () => {
        await child.kill();
        await new Promise((r) => setTimeout(r, downMs));
        child = await spawnGateway(configPath, lines);
      })();
      return restarting;
    },
    lines: () => lines,
    async close() {
      // A run that failed while its gateway was starting again: no process outlives the run.
      await restarting?.catch(() => undefined);
      await child.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
