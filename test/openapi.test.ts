import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateOpenApi, openApiText } from '../src/cli/offline/openapi.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

const CHECKED_IN = join(import.meta.dirname, '..', 'docs', 'openapi.json');

describe('OpenAPI document', () => {
  it('the checked-in docs/openapi.json is what the routes say (npm run openapi regenerates it)', async () => {
    const generated = openApiText(await generateOpenApi());
    expect(readFileSync(CHECKED_IN, 'utf8')).toBe(generated);
  });

  it('covers the contract, the session read and the operator API, with their credentials', async () => {
    const doc = JSON.parse(readFileSync(CHECKED_IN, 'utf8')) as {
      openapi: string;
      paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/v1/driver-tokens']?.post?.security).toEqual([{ fleetApiKey: [] }]);
    expect(doc.paths['/v1/sessions/quote']?.post?.security).toEqual([{ driverToken: [] }]);
    expect(doc.paths['/v1/sessions']?.post).toBeDefined();
    expect(doc.paths['/v1/sessions/{sessionId}']?.get?.security).toEqual([{ driverToken: [] }]);
    expect(doc.paths['/admin/v1/drivers/{driverId}/top-ups']?.post?.security).toEqual([
      { operatorCredential: [] },
      { consoleCookie: [] },
    ]);
    expect(doc.paths['/console/session']?.post).toBeDefined();
    expect(doc.paths['/v1/sessions/quote']?.get).toBeUndefined();
  });

  it('documents the error answers of every operator route, a download’s too', () => {
    const doc = JSON.parse(readFileSync(CHECKED_IN, 'utf8')) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const undocumented = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/admin/v1/'))
      .flatMap(([path, operations]) =>
        Object.entries(operations)
          .filter(([, o]) => !('4XX' in o.responses && '5XX' in o.responses))
          .map(([method]) => `${method} ${path}`),
      );
    expect(undocumented).toEqual([]);
    const download = doc.paths['/admin/v1/files/{fileId}']?.get?.responses;
    expect(download?.['200']).toMatchObject({
      content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
    });
    expect(download?.['404']).toMatchObject({ description: 'file_not_found' });
    expect(doc.paths['/admin/v1/files/{fileId}']?.delete?.responses['409']).toMatchObject({
      description: 'file_in_use',
    });
  });
});

describe('served by the gateway', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({ operator: { http: { host: '127.0.0.1', port: 0 } } });
  });
  afterAll(async () => t.close());

  it('at /openapi.json on the driver and on the operator address, the same whole document', async () => {
    const driver = (await (await fetch(`${t.gw.url}/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    const operator = (await (await fetch(`${t.gw.operatorUrl}/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    expect(operator).toEqual(driver);
    expect(Object.keys(driver.paths)).toEqual(
      expect.arrayContaining(['/v1/sessions', '/admin/v1/sessions', '/admin/v1/chargers']),
    );
  });
});
