import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { parseConfig } from '../../../src/config/read-config.js';
import type { GatewayConfigInput } from '../../../src/config/schema.js';
import { hashPassword } from '../../../src/ocpp/connection/charger-password.js';
import { openDatabase } from '../../../src/store/database.js';
import { spawnGateway, type GatewayProcess } from '../../helpers/gateway-process.js';
import { API_KEY, CHARGER_PASSWORD, testConfig, UNPHYSICAL_KW } from '../../helpers/gateway.js';
import { seedBenchFleet } from './seed.js';
import { rssBytes } from './stats.js';

export { API_KEY, CHARGER_PASSWORD };
export { driverEmail } from './seed.js';

/**
 * glibc's settings the image and the systemd unit give the gateway (Dockerfile,
 * deploy/systemd/fleet-gateway.service): the bench runs it as a mini PC does. The environment of
 * `npm run bench` overrides them.
 */
const MINI_PC_ENV: Record<string, string> = {
  MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
  MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '131072',
};

/** One hash for every bench charger: hashing 2,000 passwords would cost more than the bench. */
const PASSWORD_HASH = hashPassword(CHARGER_PASSWORD);

export interface BenchSite {
  /** Charger ids, each with `connectors` connectors on the DC tariff (412.5 NGN/kWh). */
  chargers: string[];
  connectors: number;
  /** Drivers `drv-0000`… with emails `d0000@bench.test`, each with this opening balance. */
  drivers: number;
  balance: number;
  /** Stored password of every charger (default: the scrypt hash of CHARGER_PASSWORD). */
  passwordHash?: string;
}

/** The gateway as an operator runs it (`dist/cli.js serve`), in its own process, on a seeded site. */
export interface GatewayChild extends GatewayProcess {
  pid: number;
  dbPath: string;
  rss(): Promise<number>;
  /** SIGTERM, so that a profiled child writes its profile; SIGKILL if it is not gone in 10 s. */
  stop(): Promise<void>;
}

/**
 * Node options for every gateway child: BENCH_CPU_PROF=dir makes each write a CPU profile there
 * when it is stopped; BENCH_GATEWAY_NODE_OPTIONS adds any other (e.g. the commit-count preload).
 */
function withNodeOptions(env: Record<string, string>): Record<string, string> {
  // A section's own NODE_OPTIONS (e.g. the OCPP window profiler) join these, never replace them.
  const options = [
    process.env.NODE_OPTIONS,
    process.env.BENCH_GATEWAY_NODE_OPTIONS,
    env.NODE_OPTIONS,
  ];
  if (process.env.BENCH_CPU_PROF)
    options.push(`--import=${new URL('./cpu-profile.js', import.meta.url).href}`);
  const joined = options.filter(Boolean).join(' ');
  return joined ? { ...env, NODE_OPTIONS: joined } : env;
}

export async function startGatewayChild(
  dir: string,
  site: BenchSite,
  overrides: Partial<GatewayConfigInput> = {},
  env: Record<string, string> = {},
): Promise<GatewayChild> {
  const base = testConfig(dir);
  const input: GatewayConfigInput = {
    ...base,
    chargers: site.chargers.map((id) => ({
      id,
      passwordHash: site.passwordHash ?? PASSWORD_HASH,
      connectors: Array.from({ length: site.connectors }, (_, i) => ({
        id: String(i + 1),
        tariff: 'dc',
        // Simulated chargers run faster than real time: no physical power bound fits them.
        maxPowerKw: UNPHYSICAL_KW,
      })),
    })),
    // A bench must measure the work, not the abuse limits: these are far above any load here.
    ocpp: { ...base.ocpp, messageRate: { perSecond: 10_000, burst: 100_000 } },
    http: {
      host: '127.0.0.1',
      port: 0,
      rateLimits: { mintPerMinute: 1_000_000, driverPerMinute: 1_000_000 },
    },
    // The default level, as operators run it (and spawnGateway waits for the info-level 'gateway listening').
    log: { level: (process.env.BENCH_LOG_LEVEL ?? 'info') as 'info' },
    ...overrides,
  };
  const configPath = join(dir, 'gateway.yaml');
  writeFileSync(configPath, stringify(input));
  const dbPath = parseConfig(input, dir).database.path;
  const db = openDatabase(dbPath);
  seedBenchFleet(db, site.drivers, site.balance, [API_KEY]);
  db.close();
  const proc = await spawnGateway(configPath, [], withNodeOptions({ ...MINI_PC_ENV, ...env }));
  const pid = proc.child.pid;
  if (pid === undefined) throw new Error('gateway child has no pid');
  const { child } = proc;
  return {
    ...proc,
    pid,
    dbPath,
    rss: () => rssBytes(pid),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      }
      await proc.kill();
    },
  };
}
