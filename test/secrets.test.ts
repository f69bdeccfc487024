import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { sha256Hex } from '../src/auth/secrets.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { errorCode, mintToken, post, quote, startSession } from './helpers/http.js';
import { rawCharger } from './helpers/raw-charger.js';
import { IONIQ, ocpp16 } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');

let t: TestGateway;
let configPath: string;
beforeAll(async () => {
  // trace: the most the gateway ever logs
  t = await startTestGateway({ log: { level: 'trace' } });
  configPath = join(t.dir, 'gateway.yaml');
  writeFileSync(configPath, stringify(t.configInput));
});
afterAll(async () => {
  await t.close();
});

async function cli(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.FLEET_GATEWAY_CONFIG;
  return run(process.execPath, [CLI, ...args, '--config', configPath], { env });
}

const mint = (apiKey: string) =>
  post(
    t.gw.url,
    '/v1/driver-tokens',
    { driverEmail: DRIVERS.ada.email },
    { authorization: `ApiKey ${apiKey}` },
  );

/** Every text and blob in every table of the database, as one string. */
function wholeDatabase(): string {
  const tables = t.gw.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
    name: string;
  }[];
  return tables
    .map(({ name }) => JSON.stringify(t.gw.db.prepare(`SELECT * FROM "${name}"`).all()))
    .join('\n');
}

describe('secrets', () => {
  it('a full session leaves no API key, driver token or charger password in the log or the database', async () => {
    const wrongPassword = 'guessed-password-0000001';
    const wrongKey = 'fgk_guessed_key_00000000000000000000';
    await expect(rawCharger(t.gw.ocppUrl, 'CP-1', wrongPassword)).rejects.toThrow(/Unauthorized/);
    expect(errorCode(await mint(wrongKey))).toBe('invalid_api_key');

    const cp = await ocpp16.connect(t.gw.ocppUrl, 'CP-1', { password: CHARGER_PASSWORD });
    try {
      await cp.plugIn(1, IONIQ);
      const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
      const target = { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email };
      await waitUntil(
        async () => (await quote(t.gw.url, token, target)).status === 200,
        5000,
        'quote',
      );
      const res = await startSession(t.gw.url, token, target, 1000);
      expect(res.status).toBe(200);
      const { sessionId } = res.body as { sessionId: string };
      await waitUntil(
        () =>
          t.gw.db
            .prepare("SELECT 1 FROM sessions WHERE id = ? AND state = 'settled'")
            .get(sessionId),
        20_000,
        'settled',
      );

      const secrets = {
        apiKey: API_KEY,
        driverToken: token,
        chargerPassword: CHARGER_PASSWORD,
        basicAuth: Buffer.from(`CP-1:${CHARGER_PASSWORD}`).toString('base64'),
        wrongPassword,
        wrongKey,
      };
      const log = t.logLines.join('\n');
      // the whole story is in the log: request lines, the mint, the charge, the settlement
      expect(log).toContain('"msg":"request"');
      expect(log).toContain('session settled');
      expect(log).toContain('driver token minted');
      // request.log is made on first use (src/api/request-logger.ts) and still names its request
      expect(t.logLines.find((l) => l.includes('driver token minted'))).toMatch(
        /"reqId":"req-[0-9a-z]+"/,
      );
      const database = wholeDatabase();
      for (const [name, secret] of Object.entries(secrets)) {
        expect(log.includes(secret), `${name} in the log`).toBe(false);
        expect(database.includes(secret), `${name} in the database`).toBe(false);
      }
      // what is stored instead: the hashes
      expect(database).toContain(sha256Hex(API_KEY));
      expect(database).toContain(sha256Hex(token));
    } finally {
      await cp.disconnect();
    }
  });

  it('rotates an API key without downtime: both work during the overlap, then only the new one', async () => {
    const keyId = sha256Hex(API_KEY).slice(0, 12);
    expect((await cli('api-key', 'list', '--fleet', 'fleet-a')).stdout).toContain(`${keyId}  `);
    const rotated = await cli(
      'api-key',
      'rotate',
      '--fleet',
      'fleet-a',
      '--replace',
      keyId,
      '--overlap-hours',
      '2',
    );
    const newKey = rotated.stdout.trim();
    expect(newKey).toMatch(/^fgk_/);
    expect(rotated.stderr).toContain(`key ${keyId} is accepted until`);
    // the running gateway, unrestarted, takes both
    expect((await mint(API_KEY)).status).toBe(200);
    expect((await mint(newKey)).status).toBe(200);
    t.clock.advance(2 * 3_600_000 + 1000);
    expect(errorCode(await mint(API_KEY))).toBe('invalid_api_key');
    expect((await mint(newKey)).status).toBe(200);
    expect((await cli('api-key', 'list', '--fleet', 'fleet-a')).stdout).toContain('active until');

    const newId = sha256Hex(newKey).slice(0, 12);
    await cli('api-key', 'revoke', '--fleet', 'fleet-a', newId);
    expect(errorCode(await mint(newKey))).toBe('invalid_api_key');
    // a key id must name exactly one of the fleet's keys
    await expect(cli('api-key', 'revoke', '--fleet', 'fleet-b', newId)).rejects.toThrow(
      /no single key/,
    );
  });
});
