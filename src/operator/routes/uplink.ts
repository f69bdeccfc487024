import type { FastifyInstance } from 'fastify';
import type { OperatorDeps } from '../api.js';
import { anyObject, cursor, limit, nullable, ok, page, pageArgs, query } from '../schemas.js';

/** The uplink: its connection, and the outbox rows waiting for it or already published. */
export function registerUplinkRoutes(app: FastifyInstance, deps: OperatorDeps): void {
  const { read } = deps;

  app.get(
    '/uplink',
    {
      schema: {
        summary: 'The uplink: connection, outbox depth, rows per topic',
        tags: ['uplink'],
        response: ok({
          type: 'object',
          properties: {
            uplink: anyObject,
            outboxDepth: { type: 'integer' },
            topics: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  topic: { type: 'string' },
                  pending: { type: 'integer' },
                  sent: { type: 'integer' },
                },
                additionalProperties: false,
              },
            },
          },
          required: ['uplink', 'outboxDepth', 'topics'],
          additionalProperties: false,
        }),
      },
    },
    async () => {
      const health = deps.health() as { outboxDepth: number; uplink: Record<string, unknown> };
      return {
        uplink: health.uplink,
        outboxDepth: health.outboxDepth,
        topics: read.uplink.byTopic(),
      };
    },
  );

  app.get(
    '/uplink/outbox',
    {
      schema: {
        summary: 'Outbox rows, newest first (pending=true: only those not yet published)',
        tags: ['uplink'],
        querystring: query({ pending: { type: 'string', enum: ['true', 'false'] }, cursor, limit }),
        response: ok(
          page({
            type: 'object',
            properties: {
              seq: { type: 'integer' },
              id: { type: 'string' },
              topic: { type: 'string' },
              type: nullable('string'),
              createdAt: { type: 'string' },
              sentAt: nullable('string'),
            },
            additionalProperties: false,
          }),
        ),
      },
    },
    async (request) => {
      const q = request.query as { pending?: string; cursor?: string; limit?: string };
      const [before, n] = pageArgs(q);
      return read.uplink.outbox(q.pending === 'true', before, n);
    },
  );
}
