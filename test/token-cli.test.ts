import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { createOperator } from './helpers/operator.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');

let t: TestGateway;
let credentialFile: string;
let configPath: string;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.FLEET_GATEWAY_OPERATOR_CREDENTIAL;
  delete env.FLEET_GATEWAY_CONFIG;
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      env: {
        ...env,
        FLEET_GATEWAY_OPERATOR_URL: t.gw.operatorUrl,
        FLEET_GATEWAY_OPERATOR_CREDENTIAL_FILE: credentialFile,
      },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

beforeAll(async () => {
  t = await startTestGateway();
  configPath = join(t.dir, 'gateway.yaml');
  writeFileSync(configPath, stringify(t.configInput));
  credentialFile = join(t.dir, 'operator.credential');
  writeFileSync(credentialFile, createOperator(t.gw.db, 'ops', 'operator'));
});
afterAll(async () => t.close());

const ada = DRIVERS.ada.id;

describe('token commands against a running gateway', { timeout: 60_000 }, () => {
  it('bind, list, find, block, unblock, unbind; a token bound elsewhere is refused', async () => {
    const bound = await cli('token', 'bind', ada, '04:A2:3B:1C', '--label', 'blue fob');
    expect(bound).toMatchObject({ code: 0 });
    expect(bound.stdout).toMatch(/^bound: tok_\S+ •••3B1C to drv-ada \(active\)/);
    const tokenId = /tok_\S+/.exec(bound.stdout)![0];

    const listed = await cli('tokens', ada);
    expect(listed.stdout).toContain(tokenId);
    expect(listed.stdout).toContain('blue fob');
    expect(listed.stdout).not.toMatch(/A23B1C|a2:3b/i);

    const found = await cli('token', 'find', '04a23b1c', '--json');
    expect(JSON.parse(found.stdout)).toMatchObject({ tokens: [{ tokenId, driverId: ada }] });

    const elsewhere = await cli('token', 'bind', DRIVERS.bola.id, '04A23B1C');
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.stderr).toContain('is bound to driver drv-ada: unbind it there first');

    expect((await cli('token', 'block', ada, tokenId, '--reason', 'lost')).stdout).toMatch(
      /^blocked: •••3B1C \(blocked\)/,
    );
    expect((await cli('token', 'unblock', ada, tokenId)).stdout).toMatch(/^unblocked/);
    expect((await cli('token', 'unbind', ada, tokenId)).stdout).toMatch(/^unbound/);
    expect((await cli('token', 'find', '04A23B1C')).stdout).toMatch(/no driver holds it/);
  });

  it('checks the value and type before any request', async () => {
    const blank = await cli('token', 'bind', ada, '   ');
    expect(blank.code).not.toBe(0);
    expect(blank.stderr).toContain('not blank');
    const type = await cli('token', 'bind', ada, 'ABCDEF01', '--type', 'Mifare');
    expect(type.code).not.toBe(0);
    const vehicle = await cli(
      'token',
      'bind',
      ada,
      'VID:0023A7F1C2D4',
      '--kind',
      'vehicle',
      '--json',
    );
    expect(JSON.parse(vehicle.stdout)).toMatchObject({
      token: { kind: 'vehicle', type: 'MacAddress' },
    });
  });

  it('seed binds the tokens of its drivers once; one bound to another driver refuses the whole seed', async () => {
    const seedPath = join(t.dir, 'seed-tokens.json');
    const seed = (driverId: string) => ({
      fleets: [
        {
          id: 'fleet-a',
          name: 'Fleet A',
          drivers: [
            {
              id: driverId,
              email: driverId === ada ? DRIVERS.ada.email : DRIVERS.bola.email,
              tokens: [{ type: 'ISO14443', value: '11:22:33:44', label: 'seeded' }],
            },
          ],
        },
      ],
    });
    writeFileSync(seedPath, JSON.stringify(seed(ada)));
    const first = await cli('seed', '--config', configPath, seedPath);
    expect(first.stdout).toMatch(/1 tokens created or changed/);
    const again = await cli('seed', '--config', configPath, seedPath);
    expect(again.stdout).toMatch(/0 tokens created or changed/);
    writeFileSync(seedPath, JSON.stringify(seed(DRIVERS.bola.id)));
    const other = await cli('seed', '--config', configPath, seedPath);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toMatch(/nothing was changed.*bound to driver drv-ada/);
    expect(JSON.parse((await cli('token', 'find', '11223344', '--json')).stdout)).toMatchObject({
      tokens: [{ driverId: ada, label: 'seeded', source: 'operator' }],
    });
  });
});
