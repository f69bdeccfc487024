import type { FastifyInstance } from 'fastify';
import { sendError } from './errors.js';
import { collectOpenApi } from './openapi.js';
import { registerRoutes } from './routes.js';
import { createJsonServer } from './server.js';
import type { ApiDeps } from './deps.js';

export type { ApiDeps, Liveness } from './deps.js';

export function buildApi(deps: ApiDeps): FastifyInstance {
  const app = createJsonServer(deps);
  collectOpenApi(app);

  const knownPaths = new Set([
    '/v1/driver-tokens',
    '/v1/sessions/quote',
    '/v1/sessions',
    '/healthz',
    '/readyz',
  ]);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (knownPaths.has(path)) {
      reply.header('allow', path.startsWith('/v1/') ? 'POST' : 'GET, HEAD');
      return sendError(reply, 'method_not_allowed', `${request.method} is not allowed on ${path}`);
    }
    return sendError(reply, 'not_found', `no route ${request.method} ${path}`);
  });

  void app.register(async (scope) => registerRoutes(scope, deps));
  return app;
}
