import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { applySeed, seedSchema } from '../../../src/admin/seed.js';
import { parseConfig } from '../../../src/config/load.js';
import type { GatewayConfigInput } from '../../../src/config/schema.js';
import { hashPassword } from '../../../src/ocpp/charger-password.js';
import { openDatabase } from '../../../src/store/database.js';
import { spawnGateway, type GatewayProcess } from '../../helpers/gateway-process.js';
import { API_KEY, CHARGER_PASSWORD, testConfig } from '../../helpers/gateway.js';
import { rssBytes } from './stats.js';

export { API_KEY, CHARGER_PASSWORD };

/** One hash for every bench charger: hashing 2,000 passwords would cost more than the bench. */
const PASSWORD_HASH = hashPassword(CHARGER_PASSWORD);

export interface BenchSite {
  /** Charger ids, each with `connectors` connectors on the DC tariff (412.5 NGN/kWh). */
  chargers: string[];
  connectors: number;
  /** Drivers `drv-0000`… with emails `d0000@bench.test`, each with this opening balance. */
  drivers: number;
  balance: number;
}

export function driverEmail(i: number): string {
  return `d${String(i).padStart(4, '0')}@bench.test`;
}

/** The gateway as an operator runs it (`dist/cli.js serve`), in its own process, on a seeded site. */
export interface GatewayChild extends GatewayProcess {
  pid: number;
  dbPath: string;
  rss(): Promise<number>;
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
      passwordHash: PASSWORD_HASH,
      connectors: Array.from({ length: site.connectors }, (_, i) => ({
        id: String(i + 1),
        tariff: 'dc',
      })),
    })),
    // A bench must measure the work, not the abuse limits: both are far above any load here.
    http: {
      host: '127.0.0.1',
      // A port known in advance: at log level warn the gateway does not log the one it got.
      port: await freePort(),
      rateLimits: { mintPerMinute: 1_000_000, driverPerMinute: 1_000_000 },
    },
    log: { level: 'warn' },
    ...overrides,
  };
  const configPath = join(dir, 'gateway.yaml');
  writeFileSync(configPath, stringify(input));
  const dbPath = parseConfig(input, dir).database.path;
  const db = openDatabase(dbPath);
  applySeed(
    db,
    seedSchema.parse({
      fleets: [
        {
          id: 'fleet-bench',
          name: 'Bench fleet',
          apiKeys: [API_KEY],
          drivers: Array.from({ length: site.drivers }, (_, i) => ({
            id: `drv-${String(i).padStart(4, '0')}`,
            email: driverEmail(i),
            openingBalance: site.balance,
          })),
        },
      ],
    }),
    new Date().toISOString(),
  );
  db.close();
  const proc = await spawnGateway(configPath, [], env, input.http?.port || undefined);
  const pid = proc.child.pid;
  if (pid === undefined) throw new Error('gateway child has no pid');
  return { ...proc, pid, dbPath, rss: () => rssBytes(pid) };
}

/** A port free on 127.0.0.1 right now (the OS's choice for port 0, released at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
