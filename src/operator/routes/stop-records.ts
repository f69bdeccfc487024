import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import { StopRecords } from '../../charging/stop-records.js';
import type { OperatorDeps } from '../api.js';
import { entityId, errorResponses } from '../schemas.js';

const attempt = {
  type: 'object',
  properties: {
    step: { type: 'string', enum: ['remote_stop', 'zero_power', 'inoperative', 'unlock'] },
    sentAt: { type: 'string' },
    reply: {
      type: 'string',
      enum: ['accepted', 'rejected', 'not_supported', 'no_answer'],
    },
  },
  required: ['step', 'sentAt', 'reply'],
  additionalProperties: false,
} as const;

const loss = {
  type: 'object',
  properties: {
    wh: { type: 'integer' },
    reason: { type: 'string', enum: ['beyond_paid', 'after_settlement', 'unproven'] },
    at: { type: 'string' },
  },
  required: ['wh', 'reason', 'at'],
  additionalProperties: false,
} as const;

/**
 * How a session's stop went (docs/ocpp.md "The stop is assured"): every step of the stop ladder
 * sent and the charger's reply, and the energy the operator delivered but could not bill.
 */
export function registerStopRecordRoutes(app: FastifyInstance, deps: OperatorDeps): void {
  const records = new StopRecords(deps.db);
  const exists = deps.db.prepare<[string], { id: string }>('SELECT id FROM sessions WHERE id = ?');
  app.get(
    '/sessions/:sessionId/stop-record',
    {
      schema: {
        summary: "A session's stop attempts and operator losses",
        tags: ['operator'],
        params: {
          type: 'object',
          properties: { sessionId: entityId },
          required: ['sessionId'],
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            properties: {
              sessionId: { type: 'string' },
              attempts: { type: 'array', items: attempt },
              losses: { type: 'array', items: loss },
              lossWh: { type: 'integer' },
            },
            required: ['sessionId', 'attempts', 'losses', 'lossWh'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      // Checked against the params schema above.
      const { sessionId } = request.params as { sessionId: string };
      if (!exists.get(sessionId))
        throw new ApiError('session_not_found', `no session ${sessionId}`);
      const losses = records.losses(sessionId);
      return {
        sessionId,
        attempts: records.attempts(sessionId),
        losses,
        lossWh: losses.reduce((sum, l) => sum + l.wh, 0),
      };
    },
  );
}
