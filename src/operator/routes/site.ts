import type { FastifyInstance } from 'fastify';
import type { OperatorDeps } from '../api.js';
import { anyObject, errorResponses, ok } from '../schemas.js';

/** The site at a glance: chargers, open sessions, the uplink. */
export function registerSiteStatus(app: FastifyInstance, deps: OperatorDeps): void {
  const { read } = deps;

  app.get(
    '/status',
    {
      schema: {
        summary: 'The site at a glance',
        tags: ['site'],
        response: ok({
          type: 'object',
          properties: {
            siteId: { type: 'string' },
            chargers: { type: 'integer' },
            chargersOnline: { type: 'integer' },
            openSessions: { type: 'integer' },
            outboxDepth: { type: 'integer' },
            uplink: anyObject,
          },
          required: ['siteId', 'chargers', 'chargersOnline', 'openSessions', 'outboxDepth'],
          additionalProperties: false,
        }),
      },
    },
    async () => {
      const health = deps.health() as {
        chargersOnline: number;
        outboxDepth: number;
        uplink: unknown;
      };
      return {
        siteId: deps.settings.siteId,
        chargers: deps.site.all().length,
        chargersOnline: health.chargersOnline,
        openSessions: read.sessions.openCount(),
        outboxDepth: health.outboxDepth,
        uplink: health.uplink,
      };
    },
  );
}

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
