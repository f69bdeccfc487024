import type Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { applySeed } from '../src/cli/offline/seed.js';
import { parseConfig } from '../src/config/read-config.js';
import { openDatabase } from '../src/store/database.js';
import {
  CHARGER_PASSWORD,
  DRIVERS,
  PASSWORD_HASH,
  testConfig,
  testSeed,
} from './helpers/gateway.js';
import { spawnGateway, type GatewayProcess } from './helpers/gateway-process.js';
import { buildMicroOcpp, startMicroOcpp, type MicroOcpp } from './helpers/microocpp.js';
import { freePort } from './helpers/mqtt-broker.js';
import { adjustWallet, bindCard } from './helpers/local-lists.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The real MicroOcpp 1.2.0 firmware's own local list (1.6 Local Auth List Management; its 2.0.1
 * mode has none) against the gateway as a child process: what the firmware answers is its own.
 */

const MINIMUM = 2_000;
const CASE_MS = 90_000;

let binary = '';

beforeAll(async () => {
  binary = await buildMicroOcpp();
}, 600_000);

/** The firmware's answer to each call it received with this action, in order. */
function answered(
  mo: MicroOcpp,
  action: string,
): { req: Record<string, unknown>; conf: unknown }[] {
  const replies = new Map(
    mo.frames.filter((f) => f.sent && f.message[0] === 3).map((f) => [f.message[1], f.message[2]]),
  );
  return mo.frames
    .filter((f) => !f.sent && f.message[0] === 2 && f.message[2] === action)
    .flatMap((f) =>
      replies.has(f.message[1])
        ? [{ req: f.message[3] as Record<string, unknown>, conf: replies.get(f.message[1]) }]
        : [],
    );
}

describe.each(['1.6', '2.0.1'] as const)('MicroOcpp local list on OCPP %s', (version) => {
  const identity = version === '1.6' ? 'MO-16' : 'MO-201';
  const lines: string[] = [];
  let dir = '';
  let gateway: GatewayProcess | undefined;
  let mo: MicroOcpp | undefined;
  let db: Database.Database | undefined;

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') {
      console.log(`MicroOcpp ${version}:\n${mo?.lines.slice(-60).join('\n')}`);
      console.log(
        `gateway:\n${lines
          .filter((l) => l.includes('local'))
          .slice(-20)
          .join('\n')}`,
      );
    }
    await mo?.stop();
    await gateway?.kill();
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    version === '1.6'
      ? 'takes the full list and a differential update, and reports the version the gateway sent after a gateway restart'
      : 'has no local list: the gateway sends it none',
    { timeout: CASE_MS },
    async () => {
      dir = mkdtempSync(join(tmpdir(), 'fleetgw-mo-ll-'));
      const input = testConfig(dir, {
        http: { host: '127.0.0.1', port: await freePort() },
        taps: { default: { amount: MINIMUM, minimum: MINIMUM } },
        localLists: { pollSeconds: 0.5, retrySeconds: 1 },
        chargers: [
          {
            id: identity,
            passwordHash: PASSWORD_HASH,
            connectors: [{ id: '1', tariff: 'ac', type: 'AC', maxPowerKw: 22 }],
          },
        ],
      });
      const configPath = join(dir, 'gateway.yaml');
      writeFileSync(configPath, stringify(input));
      db = openDatabase(parseConfig(input, dir).database.path);
      applySeed(db, testSeed, new Date().toISOString());
      bindCard(db, DRIVERS.ada.id, '04A1B2C3D4');
      bindCard(db, DRIVERS.bola.id, '04B0B0B0B0');
      gateway = await spawnGateway(configPath, lines);
      mo = await startMicroOcpp(binary, {
        version,
        identity,
        ocppUrl: gateway.ocppUrl,
        password: CHARGER_PASSWORD,
      });
      const firmware = mo;
      const prepared = () => lines.some((l) => l.includes('local authorization prepared'));
      await waitUntil(prepared, 30_000, 'the firmware asked');

      if (version === '2.0.1') {
        await new Promise((r) => setTimeout(r, 2000)); // four more rounds
        expect(lines.find((l) => l.includes('local authorization prepared'))).toContain(
          '"listSupported":false',
        );
        expect(answered(firmware, 'SendLocalList')).toEqual([]);
        return;
      }

      const lists = () => answered(firmware, 'SendLocalList');
      await waitUntil(() => lists().length === 1, 20_000, 'the full list');
      expect(lists()[0]).toEqual({
        req: {
          listVersion: 1,
          updateType: 'Full',
          localAuthorizationList: [
            { idTag: '04A1B2C3D4', idTagInfo: { status: 'Accepted' } },
            { idTag: '04B0B0B0B0', idTagInfo: { status: 'Accepted' } },
          ],
        },
        conf: { status: 'Accepted' },
      });
      adjustWallet(db, DRIVERS.bola.id, -(DRIVERS.bola.balance - 1));
      await waitUntil(() => lists().length === 2, 20_000, 'the differential update');
      expect(lists()[1]).toEqual({
        req: {
          listVersion: 2,
          updateType: 'Differential',
          localAuthorizationList: [{ idTag: '04B0B0B0B0', idTagInfo: { status: 'Blocked' } }],
        },
        conf: { status: 'Accepted' },
      });

      // The gateway restarts: on the new connection the firmware reports the list it holds.
      await gateway.kill();
      const before = answered(firmware, 'GetLocalListVersion').length;
      gateway = await spawnGateway(configPath, lines, {}, {});
      await waitUntil(
        () => answered(firmware, 'GetLocalListVersion').length > before,
        60_000,
        'the version asked again',
      );
      expect(answered(firmware, 'GetLocalListVersion').at(-1)?.conf).toEqual({ listVersion: 2 });
    },
  );
});
