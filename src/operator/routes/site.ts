import type { FastifyInstance } from 'fastify';
import type { OperatorDeps } from '../api.js';
import { errorResponses } from '../schemas.js';

/** What /healthz said to anyone before it said only ok or degraded: now for operators only. */
export function registerHealthRoutes(app: FastifyInstance, deps: OperatorDeps): void {
  app.get(
    '/health',
    {
      schema: {
        summary:
          'The gateway in detail: chargers online, uplink, outbox alarm, database (path, size), drain',
        tags: ['site'],
        response: {
          200: {
            type: 'object',
            properties: {
              status: { type: 'string', enum: ['ok', 'degraded'] },
              version: { type: 'string' },
              chargersOnline: { type: 'integer' },
              outboxDepth: { type: 'integer' },
            },
            required: ['status', 'version', 'chargersOnline', 'outboxDepth'],
            additionalProperties: true,
          },
          ...errorResponses,
        },
      },
    },
    async () => deps.health(),
  );
}
