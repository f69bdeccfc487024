import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { GatewayConfigInput } from '../src/config/schema.js';
import { makeTestPki } from './helpers/certs.js';
import { packageVersion } from '../src/shared/package-version.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { createOperator, op } from './helpers/operator.js';

const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');

/**
 * `fleet-gateway health` against a config file naming the running test gateway's port. Run
 * asynchronously: the gateway answering it lives in this process.
 */
async function health(
  t: TestGateway,
  http: GatewayConfigInput['http'],
): Promise<{ status: number; out: string }> {
  const file = join(t.dir, 'health.yaml');
  writeFileSync(file, stringify({ ...t.configInput, http }));
  try {
    const run = await promisify(execFile)(process.execPath, [CLI, 'health', '--config', file]);
    return { status: 0, out: run.stdout + run.stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { status: failed.code ?? -1, out: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

describe('fleet-gateway health (the container HEALTHCHECK)', () => {
  const pki = makeTestPki();
  const gateways: TestGateway[] = [];
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    pki.remove();
  });

  it('asks /healthz over plain HTTP, through loopback when the gateway listens on every address', async () => {
    const t = await startTestGateway({ http: { host: '0.0.0.0', port: 0 } });
    gateways.push(t);
    const result = await health(t, { host: '0.0.0.0', port: t.gw.port });
    expect(result.out).toContain(`http://127.0.0.1:${t.gw.port}/healthz: ok`);
    expect(result.status).toBe(0);
  });

  it('asks /healthz over HTTPS when http.tls is set, whatever name the certificate carries', async () => {
    const tls = { cert: pki.serverCert, key: pki.serverKey };
    const t = await startTestGateway({ http: { host: '127.0.0.1', port: 0, tls } });
    gateways.push(t);
    const result = await health(t, { host: '127.0.0.1', port: t.gw.port, tls });
    expect(result.out).toContain(`https://127.0.0.1:${t.gw.port}/healthz: ok`);
    expect(result.status).toBe(0);
    // Plain HTTP to a TLS port gets no 200: the probe must follow the config, not guess.
    const plain = await health(t, { host: '127.0.0.1', port: t.gw.port });
    expect(plain.status).toBe(1);
  });

  it('/healthz tells anyone only ok and the version; the details are for an operator', async () => {
    const t = await startTestGateway();
    gateways.push(t);
    const anyone = await fetch(`${t.gw.url}/healthz`);
    expect(anyone.status).toBe(200);
    const said = await anyone.text();
    expect(JSON.parse(said)).toEqual({ status: 'ok', version: packageVersion() });
    expect(said).not.toContain(t.dir);
    expect((await op(t.gw.operatorUrl, null, 'GET', '/health')).status).toBe(401);
    const viewer = createOperator(t.gw.db, 'vera', 'viewer');
    const details = await op(t.gw.operatorUrl, viewer, 'GET', '/health');
    expect(details.status).toBe(200);
    expect(details.body).toMatchObject({
      status: 'ok',
      version: packageVersion(),
      chargersOnline: 0,
      database: { path: expect.stringContaining(t.dir) },
      drain: { state: 'running' },
      uplink: { enabled: false },
    });
  });

  it('exits 1 when nothing answers on the configured port', async () => {
    const t = await startTestGateway();
    gateways.push(t);
    const port = t.gw.port;
    await t.gw.close();
    const result = await health(t, { host: '127.0.0.1', port });
    expect(result.out).toContain('not healthy');
    expect(result.status).toBe(1);
  });
});
