import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import { ALERT_KINDS } from '../../alerts/alert.js';
import type { AlertState, AlertStore } from '../../alerts/alert-store.js';
import type { OperatorRoutes } from '../api.js';
import { operatorAction } from '../guard.js';
import { errorResponses, objectParams } from '../schemas.js';

const nullableString = { type: ['string', 'null'] } as const;

const alert = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    kind: { type: 'string', enum: [...ALERT_KINDS] },
    subject: { type: 'string' },
    raisedAt: { type: 'string' },
    clearedAt: nullableString,
    detail: { type: 'object', additionalProperties: true },
    acknowledgedAt: nullableString,
    acknowledgedBy: nullableString,
  },
  required: [
    'id',
    'kind',
    'subject',
    'raisedAt',
    'clearedAt',
    'detail',
    'acknowledgedAt',
    'acknowledgedBy',
  ],
  additionalProperties: false,
} as const;

/** Kinds an acknowledgement also clears: facts about a session with no condition to go away. */
const CLEARED_BY_ACKNOWLEDGING = new Set(['operator_loss']);

/**
 * The site's alerts (docs/alerts.md): a read for anyone, and an acknowledgement for an operator
 * (audited) that says someone has seen it; it clears only an operator loss.
 */
export function alertRoutes(store: AlertStore): OperatorRoutes {
  return (app: FastifyInstance, deps) => {
    app.get(
      '/alerts',
      {
        schema: {
          summary: 'Alerts, newest first: open, closed or all (default open)',
          tags: ['alerts'],
          querystring: {
            type: 'object',
            properties: {
              state: { type: 'string', enum: ['open', 'closed', 'all'] },
              limit: { type: 'string', pattern: '^([1-9]|[1-9][0-9]|[1-4][0-9]{2}|500)$' },
              before: { type: 'string', format: 'date-time' },
            },
            additionalProperties: false,
          },
          response: {
            200: {
              type: 'object',
              properties: {
                alerts: { type: 'array', items: alert },
                openCount: { type: 'integer' },
              },
              required: ['alerts', 'openCount'],
              additionalProperties: false,
            },
            ...errorResponses,
          },
        },
      },
      async (request) => {
        const q = request.query as { state?: AlertState; limit?: string; before?: string };
        return {
          alerts: store.list(q.state ?? 'open', Number(q.limit ?? 100), q.before),
          openCount: store.openCount(),
        };
      },
    );

    app.post(
      '/alerts/:alertId/acknowledge',
      {
        schema: {
          summary: 'Acknowledge an alert (an operator loss is cleared by it)',
          tags: ['alerts'],
          params: objectParams('alertId'),
          response: { 200: alert, ...errorResponses },
        },
        ...operatorAction('alert.acknowledge'),
      },
      async (request) => {
        const { alertId } = request.params as { alertId: string };
        const found = store.get(alertId);
        if (!found) throw new ApiError('alert_not_found', `no alert ${alertId}`);
        const at = new Date(deps.clock.now()).toISOString();
        store.acknowledge(alertId, request.operator?.name ?? 'unknown', at);
        if (CLEARED_BY_ACKNOWLEDGING.has(found.kind)) store.clear(alertId, at);
        return store.get(alertId);
      },
    );
  };
}
