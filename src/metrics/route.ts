import type { FastifyInstance } from 'fastify';
import { sameHash, sha256Hex } from '../auth/secrets.js';
import { ApiError } from '../api/errors.js';
import type { GatewayMetrics } from './metrics.js';

/**
 * GET /metrics for a Prometheus scraper holding the metrics bearer token (config
 * metrics.bearerTokenSha256). Its own credential: neither an operator's nor a fleet's opens it,
 * and the metrics token opens nothing else.
 */
export function registerMetricsRoute(
  app: FastifyInstance,
  metrics: GatewayMetrics,
  bearerTokenSha256: string,
): void {
  app.get('/metrics', async (request, reply) => {
    const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
    if (!match?.[1] || !sameHash(sha256Hex(match[1]), bearerTokenSha256)) {
      throw new ApiError(
        'invalid_metrics_token',
        'Authorization: Bearer <metrics token> is required',
      );
    }
    const { contentType, body } = await metrics.scrape();
    return reply.type(contentType).send(body);
  });
}
