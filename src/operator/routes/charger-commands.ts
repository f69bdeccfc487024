import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { OperatorDeps } from '../api.js';
import type { ActionAnswer } from '../charger-actions.js';
import { operatorAction } from '../guard.js';
import { entityId, errorResponses, objectParams, reason } from '../schemas.js';

const connectorParams = objectParams('chargerId', 'connectorId');
const chargerParams = objectParams('chargerId');

/** The charger's answer: its own status word and whole reply, and whether it took the command. */
const actionAnswer = {
  type: 'object',
  properties: {
    chargerId: { type: 'string' },
    connectorId: { type: ['string', 'null'] },
    status: { type: 'string' },
    accepted: { type: 'boolean' },
    reply: {},
  },
  required: ['chargerId', 'connectorId', 'status', 'accepted', 'reply'],
} as const;

const answers = (ok: object) => ({ 200: ok, ...errorResponses });

const availabilityBody = {
  type: 'object',
  properties: { operative: { type: 'boolean' }, reason },
  required: ['operative'],
  additionalProperties: false,
} as const;

interface AvailabilityBody {
  operative: boolean;
  reason?: string;
}

/** Configuration names: 1.6 keys (CiString50) or 2.0.1 Component.Variable. */
const configName = { type: 'string', minLength: 1, maxLength: 120, pattern: '^[\\x21-\\x7E]+$' };

/**
 * Acting on chargers (/admin/v1/chargers/..., /admin/v1/sessions/:id/stop): every route sends
 * one OCPP call through the charger port and answers with the charger's own reply; every one is
 * in the audit trail, the commands need the operator role.
 */
export function registerChargerCommands(app: FastifyInstance, deps: OperatorDeps): void {
  const actions = deps.chargerActions;
  const audited = (request: { auditResult?: Record<string, unknown> }, a: ActionAnswer) => {
    request.auditResult = { status: a.status, accepted: a.accepted };
    return a;
  };

  app.post<{ Params: { chargerId: string }; Body: { type: 'soft' | 'hard' } }>(
    '/chargers/:chargerId/reset',
    {
      schema: {
        summary: 'Reset a charger: soft waits for running transactions, hard does not',
        tags: ['chargers'],
        params: chargerParams,
        body: {
          type: 'object',
          properties: { type: { type: 'string', enum: ['soft', 'hard'] } },
          required: ['type'],
          additionalProperties: false,
        },
        response: answers(actionAnswer),
      },
      ...operatorAction('charger.reset'),
    },
    async (request) =>
      audited(request, await actions.reset(request.params.chargerId, request.body.type)),
  );

  app.post<{ Params: { chargerId: string; connectorId: string } }>(
    '/chargers/:chargerId/connectors/:connectorId/unlock',
    {
      schema: {
        summary: 'Unlock a connector’s cable',
        tags: ['chargers'],
        params: connectorParams,
        response: answers(actionAnswer),
      },
      ...operatorAction('charger.unlock'),
    },
    async (request) =>
      audited(
        request,
        await actions.unlockConnector(request.params.chargerId, request.params.connectorId),
      ),
  );

  // The whole charger, or one connector: one handler.
  for (const [path, params, summary] of [
    [
      '/chargers/:chargerId/availability',
      chargerParams,
      'Take a whole charger out of service, or back into it',
    ],
    [
      '/chargers/:chargerId/connectors/:connectorId/availability',
      connectorParams,
      'Take one connector out of service, or back into it',
    ],
  ] as const) {
    app.post<{ Params: { chargerId: string; connectorId?: string }; Body: AvailabilityBody }>(
      path,
      {
        schema: {
          summary,
          tags: ['chargers'],
          params,
          body: availabilityBody,
          response: answers(actionAnswer),
        },
        ...operatorAction('charger.availability'),
      },
      async (request) =>
        audited(
          request,
          await actions.setAvailability(
            request.params.chargerId,
            request.params.connectorId ?? null,
            request.body.operative,
            { by: request.operator?.name ?? 'unknown', reason: request.body.reason ?? null },
          ),
        ),
    );
  }

  app.post<{
    Params: { chargerId: string };
    Body: { message: 'status' | 'meter'; connectorId?: string };
  }>(
    '/chargers/:chargerId/trigger',
    {
      schema: {
        summary: 'Ask a charger to send a status or meter report now',
        tags: ['chargers'],
        params: chargerParams,
        body: {
          type: 'object',
          properties: {
            message: { type: 'string', enum: ['status', 'meter'] },
            connectorId: entityId,
          },
          required: ['message'],
          additionalProperties: false,
        },
        response: answers(actionAnswer),
      },
      ...operatorAction('charger.trigger'),
    },
    async (request) =>
      audited(
        request,
        await actions.trigger(
          request.params.chargerId,
          request.body.connectorId ?? null,
          request.body.message,
        ),
      ),
  );

  app.get<{ Params: { chargerId: string }; Querystring: { keys?: string } }>(
    '/chargers/:chargerId/config',
    {
      schema: {
        summary: 'Read a charger’s configuration (1.6 keys, 2.0.1 Component.Variable)',
        tags: ['chargers'],
        params: chargerParams,
        querystring: {
          type: 'object',
          properties: {
            keys: { type: 'string', minLength: 1, maxLength: 4000, pattern: '^[\\x21-\\x7E]+$' },
          },
          additionalProperties: false,
        },
        response: answers({
          type: 'object',
          properties: {
            chargerId: { type: 'string' },
            entries: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  key: { type: 'string' },
                  value: { type: ['string', 'null'] },
                  readonly: { type: ['boolean', 'null'] },
                  status: { type: 'string' },
                },
                required: ['key', 'value', 'readonly'],
              },
            },
            unknownKeys: { type: 'array', items: { type: 'string' } },
            reply: {},
          },
          required: ['chargerId', 'entries', 'unknownKeys', 'reply'],
        }),
      },
      // A read, open to viewers; recorded all the same, since it is a call to the charger.
      config: { audit: 'charger.config.read' },
    },
    async (request) => {
      const keys = request.query.keys?.split(',').filter((k) => k.length > 0) ?? [];
      const answer = await actions.readConfiguration(request.params.chargerId, keys);
      request.auditResult = { entries: answer.entries.length, unknownKeys: answer.unknownKeys };
      return answer;
    },
  );

  app.put<{ Params: { chargerId: string }; Body: { name: string; value: string } }>(
    '/chargers/:chargerId/config',
    {
      schema: {
        summary: 'Change one setting on the site’s allow-list (chargerOperations.writableConfig)',
        tags: ['chargers'],
        params: chargerParams,
        body: {
          type: 'object',
          properties: {
            name: configName,
            value: { type: 'string', maxLength: 1000 },
          },
          required: ['name', 'value'],
          additionalProperties: false,
        },
        response: answers(actionAnswer),
      },
      ...operatorAction('charger.config.change'),
    },
    async (request) =>
      audited(
        request,
        await actions.changeConfiguration(
          request.params.chargerId,
          request.body.name,
          request.body.value,
        ),
      ),
  );

  app.post<{ Params: { sessionId: string } }>(
    '/sessions/:sessionId/stop',
    {
      schema: {
        summary: 'Stop a charging session; it settles as any other when the charger ends it',
        tags: ['sessions'],
        params: objectParams('sessionId'),
        response: answers({
          type: 'object',
          properties: {
            ...actionAnswer.properties,
            sessionId: { type: 'string' },
            sessionState: { type: 'string' },
            retrying: { type: 'boolean' },
          },
          required: [...actionAnswer.required, 'sessionId', 'sessionState', 'retrying'],
        }),
      },
      ...operatorAction('session.stop'),
    },
    async (request) => {
      const answer = await actions.stopSession(
        request.params.sessionId,
        request.operator ?? { id: 'unknown', name: 'unknown' },
      );
      request.auditResult = {
        status: answer.status,
        accepted: answer.accepted,
        retrying: answer.retrying,
      };
      return answer;
    },
  );
}
