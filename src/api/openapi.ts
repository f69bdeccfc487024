import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { packageVersion } from '../shared/package-version.js';

/** Which credential a path takes: the contract's three, the driver's read, the operator API. */
function security(url: string): Record<string, string[]>[] | undefined {
  if (url.startsWith('/admin/')) return [{ operatorCredential: [] }, { consoleCookie: [] }];
  if (url === '/v1/driver-tokens') return [{ fleetApiKey: [] }];
  if (url.startsWith('/v1/sessions')) return [{ driverToken: [] }];
  return undefined;
}

/**
 * Collects the routes' own JSON schemas into an OpenAPI 3.1 document (@fastify/swagger). Call it
 * before any route is added: the plugin learns routes as they are registered.
 */
export function collectOpenApi(app: FastifyInstance): void {
  void app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Fleet charging gateway',
        version: packageVersion(),
        description:
          'The Fleet Charging Session Service contract (docs/api.md), the driver’s session read and the operator API (docs/operator-api.md). Generated from the routes’ own schemas: npm run openapi.',
      },
      components: {
        securitySchemes: {
          fleetApiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'Authorization: ApiKey <fleet API key>',
          },
          driverToken: { type: 'http', scheme: 'bearer', description: 'A driver token' },
          operatorCredential: {
            type: 'http',
            scheme: 'bearer',
            description: 'An operator credential (fleet-gateway operator create)',
          },
          consoleCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'fg_console',
            description:
              'A browser console login (POST /console/session); non-GET requests also need x-csrf-token',
          },
        },
      },
    },
    hideUntagged: false,
    transform: ({ schema, url }) => {
      const needs = security(url);
      const withSecurity = needs ? { ...schema, security: needs } : schema;
      return { schema: withSecurity as FastifySchema, url };
    },
  });
}

/** The document of the driver API plus, when it listens apart, the operator API's paths. */
export function openApiDocument(
  api: FastifyInstance,
  operatorApi: FastifyInstance | undefined,
): Record<string, unknown> {
  const main = api.swagger() as unknown as Record<string, unknown> & {
    paths?: Record<string, unknown>;
  };
  if (!operatorApi) return main;
  const op = operatorApi.swagger() as unknown as { paths?: Record<string, unknown> };
  return { ...main, paths: { ...main.paths, ...op.paths } };
}

/** Serves the document at /openapi.json (built once, on first request). */
export function serveOpenApi(app: FastifyInstance, document: () => Record<string, unknown>): void {
  let cached: Record<string, unknown> | undefined;
  app.get('/openapi.json', { schema: { hide: true } }, async () => (cached ??= document()));
}
