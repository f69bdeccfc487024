import type { FastifyInstance } from 'fastify';
import type { OperatorDeps } from '../api.js';
import { errorResponses, nullable, ok, operatorIdentity } from '../schemas.js';

/** Who is asking, and what operators did (the audit trail). */
export function registerWhoamiAndAudit(app: FastifyInstance, deps: OperatorDeps): void {
  app.get(
    '/whoami',
    {
      schema: {
        summary: 'The operator behind the credential',
        tags: ['operator'],
        response: {
          200: operatorIdentity,
          ...errorResponses,
        },
      },
    },
    async (request) => request.operator,
  );

  app.get(
    '/audit',
    {
      schema: {
        summary: 'The audit trail, newest first',
        tags: ['operator'],
        querystring: {
          type: 'object',
          properties: {
            before: { type: 'string', pattern: '^[1-9][0-9]{0,15}$' },
            limit: { type: 'string', pattern: '^([1-9][0-9]?|[1-4][0-9]{2}|500)$' },
          },
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            properties: {
              entries: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    seq: { type: 'integer' },
                    at: { type: 'string' },
                    operatorId: { type: 'string' },
                    operatorName: { type: 'string' },
                    action: { type: 'string' },
                    params: {},
                    status: { type: 'integer' },
                    result: {},
                  },
                  required: ['seq', 'at', 'operatorId', 'operatorName', 'action', 'status'],
                  additionalProperties: false,
                },
              },
              nextCursor: { type: ['string', 'null'] },
            },
            required: ['entries', 'nextCursor'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const q = request.query as { before?: string; limit?: string };
      const limit = q.limit === undefined ? 100 : Number(q.limit);
      const entries = deps.audit.page(
        q.before === undefined ? Number.MAX_SAFE_INTEGER : Number(q.before),
        limit,
      );
      const last = entries.at(-1);
      return { entries, nextCursor: entries.length === limit && last ? String(last.seq) : null };
    },
  );
}

/** The operators of the site and their roles. */
export function registerOperatorList(app: FastifyInstance, deps: OperatorDeps): void {
  app.get(
    '/operators',
    {
      schema: {
        summary: 'Operators and their roles (never a credential)',
        tags: ['operator'],
        response: ok({
          type: 'object',
          properties: {
            operators: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  id: { type: 'string' },
                  name: { type: 'string' },
                  role: { type: 'string' },
                  createdAt: { type: 'string' },
                  revokedAt: nullable('string'),
                },
                additionalProperties: false,
              },
            },
          },
          required: ['operators'],
          additionalProperties: false,
        }),
      },
    },
    async () => ({ operators: deps.operators.list() }),
  );
}
