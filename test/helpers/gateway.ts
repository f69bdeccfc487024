import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { applySeed, seedSchema, type SeedFile } from '../../src/cli/offline/seed.js';
import { hashPassword } from '../../src/ocpp/connection/charger-password.js';
import { parseConfig } from '../../src/config/read-config.js';
import type { GatewayConfigInput } from '../../src/config/schema.js';
import { startGateway, type GatewayOptions, type RunningGateway } from '../../src/gateway.js';
import type { Clock } from '../../src/shared/clock.js';
import { createLogger } from '../../src/shared/log.js';
import { openDatabase } from '../../src/store/database.js';

export const API_KEY = 'fgk_test_fleet_key_000000000000000001';
export const OTHER_API_KEY = 'fgk_test_other_fleet_key_0000000000002';
export const CHARGER_PASSWORD = 'test-charger-password-01';
export const PASSWORD_HASH = hashPassword(CHARGER_PASSWORD);

/** Real time plus an offset the test moves forward: token expiry without sleeping. */
export class ManualClock implements Clock {
  private offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

export const DRIVERS = {
  ada: { id: 'drv-ada', email: 'ada@fleet.test', balance: 50_000 },
  bola: { id: 'drv-bola', email: 'bola@fleet.test', balance: 3_000 },
  gone: { id: 'drv-gone', email: 'gone@fleet.test', balance: 1_000 },
  other: { id: 'drv-other', email: 'other@elsewhere.test', balance: 9_000 },
} as const;

export const testSeed: SeedFile = seedSchema.parse({
  fleets: [
    {
      id: 'fleet-a',
      name: 'Fleet A',
      apiKeys: [API_KEY],
      drivers: [
        {
          id: DRIVERS.ada.id,
          email: DRIVERS.ada.email,
          vehicle: { model: 'Hyundai Ioniq 5', batteryKwh: 77.4 },
          openingBalance: DRIVERS.ada.balance,
        },
        { id: DRIVERS.bola.id, email: DRIVERS.bola.email, openingBalance: DRIVERS.bola.balance },
        {
          id: DRIVERS.gone.id,
          email: DRIVERS.gone.email,
          active: false,
          openingBalance: DRIVERS.gone.balance,
        },
      ],
    },
    {
      id: 'fleet-b',
      name: 'Fleet B',
      apiKeys: [OTHER_API_KEY],
      drivers: [
        { id: DRIVERS.other.id, email: DRIVERS.other.email, openingBalance: DRIVERS.other.balance },
      ],
    },
  ],
});

/** A terawatt: 300 kWh in a millisecond, above anything a test sends. */
export const UNPHYSICAL_KW = 1_000_000_000;

/**
 * The test site's chargers. Simulators run up to 600 times faster than real time and raw-frame
 * tests send a session's energy within milliseconds: no physical power bound fits them, so their
 * connectors are unbounded unless a test of the bound gives one.
 */
export function testChargers(maxPowerKw = UNPHYSICAL_KW): GatewayConfigInput['chargers'] {
  return [
    {
      id: 'CP-1',
      passwordHash: PASSWORD_HASH,
      connectors: [
        { id: '1', tariff: 'dc', maxPowerKw },
        { id: '2', tariff: 'dc', maxPowerKw },
      ],
    },
    {
      id: 'CP-AC',
      passwordHash: PASSWORD_HASH,
      connectors: [{ id: '1', tariff: 'ac', maxPowerKw }],
    },
    {
      id: 'CP-OFF',
      passwordHash: PASSWORD_HASH,
      connectors: [{ id: '1', tariff: 'ac', maxPowerKw }],
    },
  ];
}

export function testConfig(
  dir: string,
  overrides: Partial<GatewayConfigInput> = {},
): GatewayConfigInput {
  return {
    siteId: 'test-site',
    http: { host: '127.0.0.1', port: 0 },
    ocpp: {
      meterSampleIntervalSeconds: 10,
      callTimeoutSeconds: 2,
      // Refusals still wait (and escalate), just not long enough to slow the suite down.
      authFailureDelay: { initialMilliseconds: 5, maxMilliseconds: 40 },
    },
    database: { path: join(dir, 'gateway.db') },
    sessions: {
      startTimeoutSeconds: 5,
      maxAmount: 1_000_000,
      stopLeadMilliseconds: 0,
      recoveryWaitSeconds: 1,
    },
    tariffs: { dc: { pricePerKwh: 412.5 }, ac: { pricePerKwh: 250 } },
    chargers: testChargers(),
    log: { level: 'info' },
    ...overrides,
  };
}

export interface TestGateway {
  gw: RunningGateway;
  dir: string;
  clock: ManualClock;
  logLines: string[];
  configInput: GatewayConfigInput;
  close(): Promise<void>;
  restart(): Promise<void>;
}

export async function startTestGateway(
  overrides: Partial<GatewayConfigInput> = {},
  options: Pick<GatewayOptions, 'consoleBundleDir' | 'settingsPacing'> = {},
): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-'));
  const configInput = testConfig(dir, overrides);
  const config = parseConfig(configInput, dir);
  const db = openDatabase(config.database.path);
  applySeed(db, testSeed, new Date().toISOString());
  db.close();
  const clock = new ManualClock();
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const boot = (port = 0) => {
    const config = parseConfig({ ...configInput, http: { ...configInput.http, port } }, dir);
    return startGateway(config, { ...options, clock, log: createLogger(config.log.level, sink) });
  };
  const t: TestGateway = {
    gw: await boot(),
    dir,
    clock,
    logLines,
    configInput,
    async close() {
      await t.gw.close();
      rmSync(dir, { recursive: true, force: true });
    },
    /** Stops and starts the gateway on the same database and port, as an operator's restart does. */
    async restart() {
      const port = t.gw.port;
      await t.gw.close();
      t.gw = await boot(port);
    },
  };
  return t;
}
