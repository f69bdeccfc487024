import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import { ALERT_KINDS } from '../../alerts/alert.js';
import type { AlertState, AlertStore } from '../../alerts/alert-store.js';
import { AlertDeliveries, type Delivery } from '../../alerts/deliveries.js';
import type { Alert } from '../../alerts/alert.js';
import type { OperatorRoutes } from '../api.js';
import { operatorAction } from '../guard.js';
import { errorResponses, objectParams } from '../schemas.js';

const nullableString = { type: ['string', 'null'] } as const;

/** One event's state with the webhook (docs/alerts.md, Delivery). */
const delivery = {
  type: 'object',
  properties: {
    eventId: { type: 'string' },
    type: { type: 'string', enum: ['alert.raised', 'alert.cleared', 'alert.test'] },
    createdAt: { type: 'string' },
    attempts: { type: 'integer' },
    lastError: nullableString,
    nextAttemptAt: nullableString,
    deliveredAt: nullableString,
    givenUpAt: nullableString,
    waitingBehind: { type: 'integer' },
  },
  required: [
    'eventId',
    'type',
    'createdAt',
    'attempts',
    'lastError',
    'nextAttemptAt',
    'deliveredAt',
    'givenUpAt',
    'waitingBehind',
  ],
  additionalProperties: false,
} as const;

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
    deliveries: { type: 'array', items: delivery },
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
    'deliveries',
  ],
  additionalProperties: false,
} as const;

/** Kinds an acknowledgement also clears: facts about a session with no condition to go away. */
const CLEARED_BY_ACKNOWLEDGING = new Set(['operator_loss', 'station_payment']);

/**
 * The site's alerts (docs/alerts.md): a read for anyone, with each event's webhook delivery; an
 * acknowledgement for an operator (audited) that says someone has seen it, which clears only an
 * operator loss or a station's payment; and a test event an operator sends through the webhook (audited).
 */
export function alertRoutes(store: AlertStore): OperatorRoutes {
  return (app: FastifyInstance, deps) => {
    const deliveries = new AlertDeliveries(deps.db);
    const withDeliveries = (a: Alert): Alert & { deliveries: Delivery[] } => ({
      ...a,
      deliveries: deliveries.ofAlert(a.id),
    });

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
                webhook: {
                  type: 'object',
                  properties: {
                    configured: { type: 'boolean' },
                    undelivered: { type: 'integer' },
                  },
                  required: ['configured', 'undelivered'],
                  additionalProperties: false,
                },
              },
              required: ['alerts', 'openCount', 'webhook'],
              additionalProperties: false,
            },
            ...errorResponses,
          },
        },
      },
      async (request) => {
        const q = request.query as { state?: AlertState; limit?: string; before?: string };
        return {
          alerts: store
            .list(q.state ?? 'open', Number(q.limit ?? 100), q.before)
            .map(withDeliveries),
          openCount: store.openCount(),
          webhook: { configured: store.hasWebhook, undelivered: store.undelivered() },
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
        return withDeliveries(store.get(alertId) ?? found);
      },
    );

    app.post(
      '/alerts/test',
      {
        schema: {
          summary: 'Send a test event through the webhook, behind any event still waiting',
          tags: ['alerts'],
          response: { 202: delivery, ...errorResponses },
        },
        ...operatorAction('alert.test'),
      },
      async (request, reply) => {
        const at = new Date(deps.clock.now()).toISOString();
        const eventId = store.sendTest(request.operator?.name ?? 'unknown', at);
        if (eventId === null) {
          throw new ApiError('webhook_not_configured', 'alerts.webhook is not set in the config');
        }
        request.auditResult = { eventId };
        return reply.code(202).send(deliveries.get(eventId));
      },
    );

    app.get(
      '/alerts/deliveries/:eventId',
      {
        schema: {
          summary: "One event's webhook delivery: attempts, last error, delivered or given up",
          tags: ['alerts'],
          params: objectParams('eventId'),
          response: { 200: delivery, ...errorResponses },
        },
      },
      async (request) => {
        const { eventId } = request.params as { eventId: string };
        const found = deliveries.get(eventId);
        if (!found) throw new ApiError('event_not_found', `no webhook event ${eventId}`);
        return found;
      },
    );
  };
}
