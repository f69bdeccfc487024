import { Ajv } from 'ajv';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { compileDeferred, compileOnFirstUse } from '../src/api/deferred-compilers.js';
import { createJsonServer } from '../src/api/server.js';
import { STRICT_AJV_OPTIONS } from '../src/api/schemas.js';
import { createLogger } from '../src/shared/log.js';
import { startTestGateway } from './helpers/gateway.js';

/**
 * Route schemas are compiled on a route's first use, not before the server listens: the
 * validators and serializers that result must be the ones fastify would have built.
 */
const body = {
  type: 'object',
  additionalProperties: false,
  required: ['chargerId', 'amount'],
  properties: { chargerId: { type: 'string', minLength: 1 }, amount: { type: 'integer' } },
} as const;

describe('a validator compiled on first use', () => {
  it('is compiled at its first call, then answers and reports as ajv compiled it', () => {
    const lazy = new Ajv(STRICT_AJV_OPTIONS);
    let compiled = 0;
    const compile = lazy.compile.bind(lazy);
    lazy.compile = ((schema: object) => {
      compiled++;
      return compile(schema);
    }) as typeof lazy.compile;
    compileOnFirstUse(lazy);
    const validate = lazy.compile(body);
    expect(compiled).toBe(0);
    const eager = new Ajv(STRICT_AJV_OPTIONS).compile(body);
    for (const data of [
      { chargerId: 'CP-1', amount: 5 },
      { chargerId: 'CP-1', amount: '5' },
      { chargerId: '', amount: 5 },
      { chargerId: 'CP-1', amount: 5, extra: true },
    ]) {
      expect(validate(data)).toBe(eager(data));
      expect(validate.errors).toEqual(eager.errors);
    }
    expect(compiled).toBe(1);
  });
});

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('the API server with deferred compilers', () => {
  it('validates headers (case-insensitively), bodies and answers as before', async () => {
    app = createJsonServer({
      log: createLogger('silent'),
      tls: undefined,
      bodyLimitBytes: 10_000,
    });
    app.post(
      '/t',
      {
        schema: {
          headers: {
            type: 'object',
            required: ['Idempotency-Key'],
            properties: { 'Idempotency-Key': { type: 'string', minLength: 8 } },
          },
          body,
          response: {
            200: {
              type: 'object',
              properties: { chargerId: { type: 'string' }, amount: { type: 'integer' } },
            },
          },
        },
      },
      async (request) => ({ ...(request.body as object), secret: 'not in the schema' }),
    );
    await app.ready();
    const post = (headers: Record<string, string>, payload: object) =>
      app!.inject({ method: 'POST', url: '/t', headers, payload });

    const ok = await post({ 'idempotency-key': 'key-12345' }, { chargerId: 'CP-1', amount: 5 });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ chargerId: 'CP-1', amount: 5 });

    const noKey = await post({}, { chargerId: 'CP-1', amount: 5 });
    expect(noKey.statusCode).toBe(400);
    expect(noKey.json().error.code).toBe('invalid_request');

    const extra = await post(
      { 'idempotency-key': 'key-12345' },
      { chargerId: 'CP-1', amount: 5, extra: 1 },
    );
    expect(extra.statusCode).toBe(400);
    const coerced = await post(
      { 'idempotency-key': 'key-12345' },
      { chargerId: 'CP', amount: '5' },
    );
    expect(coerced.statusCode).toBe(400);
  });
});

describe('every route of the gateway', () => {
  it('has schemas that compile: the driver API, the operator API and the console', async () => {
    const t = await startTestGateway({ operator: { http: { host: '127.0.0.1', port: 0 } } });
    try {
      const compiled = compileDeferred();
      // Each route has a body, params, query or headers validator and a serializer per answer.
      expect(compiled).toBeGreaterThan(300);
      expect(compileDeferred()).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('a schema that does not compile fails here, not at its first request', async () => {
    app = createJsonServer({ log: createLogger('silent'), tls: undefined, bodyLimitBytes: 1_000 });
    app.post(
      '/broken',
      { schema: { body: { type: 'object', properties: { a: { type: 'strng' } } } } },
      async () => ({}),
    );
    await app.ready();
    expect(() => compileDeferred()).toThrow(/strng|type/);
  });
});
