import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import {
  hashPassword,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
} from '../../ocpp/connection/charger-password.js';
import type { OperatorDeps } from '../api.js';
import { pushChargerPassword } from '../charger-password-push.js';
import { asApiError } from '../errors.js';
import { operatorAction } from '../guard.js';
import { errorResponses, objectParams } from '../schemas.js';

const password = {
  type: 'string',
  minLength: PASSWORD_MIN_LENGTH,
  maxLength: PASSWORD_MAX_LENGTH,
  pattern: '^[\\x21-\\x7E]+$',
} as const;
const chargerIdSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 48,
  pattern: '^[A-Za-z0-9._:-]+$',
} as const;

/**
 * Chargers at runtime: add one, rotate its password with an overlap, retire it. No restart; the
 * charger registry keeps the database and the in-memory directory in step.
 */
export function registerChargerRegistry(app: FastifyInstance, deps: OperatorDeps): void {
  app.post(
    '/chargers',
    {
      schema: {
        summary: 'Add a charger (accepted from its next connection)',
        tags: ['chargers'],
        body: {
          type: 'object',
          properties: {
            id: chargerIdSchema,
            securityProfile: { type: 'integer', enum: [1, 2, 3] },
            password,
            connectors: {
              type: 'array',
              minItems: 1,
              maxItems: 32,
              items: {
                type: 'object',
                properties: {
                  id: { type: 'string', minLength: 1, maxLength: 32, pattern: '^[A-Za-z0-9._-]+$' },
                  ocppConnectorId: { type: 'integer', minimum: 1, maximum: 1000 },
                  tariff: { type: 'string', minLength: 1, maxLength: 64 },
                  // As in the config file: the plausibility bound on the energy it reports.
                  type: { type: 'string', enum: ['AC', 'DC'] },
                  maxPowerKw: { type: 'number', exclusiveMinimum: 0, maximum: 1_000_000_000 },
                },
                required: ['id', 'tariff'],
                additionalProperties: false,
              },
            },
          },
          required: ['id', 'securityProfile', 'connectors'],
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            properties: { chargerId: { type: 'string' }, securityProfile: { type: 'integer' } },
            required: ['chargerId', 'securityProfile'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
      ...operatorAction('charger.add'),
    },
    async (request) => {
      const body = request.body as {
        id: string;
        securityProfile: 1 | 2 | 3;
        password?: string;
        connectors: {
          id: string;
          ocppConnectorId?: number;
          tariff: string;
          type?: 'AC' | 'DC';
          maxPowerKw?: number;
        }[];
      };
      const bad = (message: string) => new ApiError('invalid_request', message);
      if (body.securityProfile !== 3 && body.password === undefined)
        throw bad('a password is required for security profiles 1 and 2');
      if (body.securityProfile === 2 && !deps.settings.chargerTls.tls)
        throw bad('security profile 2 needs ocpp.tls or http.tls in the config');
      if (body.securityProfile === 3 && !deps.settings.chargerTls.clientCa)
        throw bad('security profile 3 needs ocpp.tls with a ca in the config');
      const ids = body.connectors.map((c) => c.id);
      const ocppIds = body.connectors.map((c) => c.ocppConnectorId ?? Number(c.id));
      if (new Set(ids).size !== ids.length) throw bad('connector ids must be unique');
      if (
        ocppIds.some((n) => !Number.isInteger(n) || n < 1) ||
        new Set(ocppIds).size !== ids.length
      )
        throw bad('each connector needs its own positive ocppConnectorId (or a numeric id)');
      const hash = body.password === undefined ? undefined : hashPassword(body.password);
      asApiError(() =>
        deps.chargerRegistry.add(
          { id: body.id, securityProfile: body.securityProfile, connectors: body.connectors },
          hash,
          deps.clock.now(),
        ),
      );
      request.log.info({ chargerId: body.id, operator: request.operator?.name }, 'charger added');
      return { chargerId: body.id, securityProfile: body.securityProfile };
    },
  );

  app.post(
    '/chargers/:chargerId/password',
    {
      schema: {
        summary:
          "Rotate a charger's password; the old one works for overlapSeconds more. With setOnCharger, the gateway sets it on the charger over OCPP first",
        tags: ['chargers'],
        params: objectParams('chargerId'),
        body: {
          type: 'object',
          properties: {
            password,
            overlapSeconds: { type: 'integer', minimum: 0, maximum: 30 * 86_400 },
            /** 1.6 ChangeConfiguration AuthorizationKey, 2.0.1 SetVariables BasicAuthPassword. */
            setOnCharger: { type: 'boolean' },
          },
          required: ['password'],
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            properties: {
              chargerId: { type: 'string' },
              /** Null: the old passwords stay valid (the charger did not take the new one). */
              previousPasswordsEndAt: { type: ['string', 'null'] },
              /** With setOnCharger: the charger's own answer. */
              charger: {
                type: 'object',
                properties: { status: { type: 'string' }, accepted: { type: 'boolean' } },
                required: ['status', 'accepted'],
                additionalProperties: false,
              },
            },
            required: ['chargerId', 'previousPasswordsEndAt'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
      ...operatorAction('charger.password_rotate'),
    },
    async (request) => {
      const { chargerId } = request.params as { chargerId: string };
      const body = request.body as {
        password: string;
        overlapSeconds?: number;
        setOnCharger?: boolean;
      };
      const overlapMs = (body.overlapSeconds ?? 3600) * 1000;
      if (body.setOnCharger) {
        if (!deps.site.charger(chargerId))
          throw new ApiError('charger_not_found', `no charger with id ${chargerId}`);
        const { previousPasswordsEndAt, ...charger } = await pushChargerPassword(
          deps,
          chargerId,
          body.password,
          overlapMs,
        );
        request.auditResult = { previousPasswordsEndAt, charger };
        request.log.info(
          { chargerId, operator: request.operator?.name, answer: charger.status },
          'charger password set on the charger',
        );
        return { chargerId, previousPasswordsEndAt, charger };
      }
      const hash = hashPassword(body.password);
      const endsAt = asApiError(() =>
        deps.chargerRegistry.rotatePassword(chargerId, hash, overlapMs, deps.clock.now()),
      );
      request.auditResult = { previousPasswordsEndAt: endsAt };
      return { chargerId, previousPasswordsEndAt: endsAt };
    },
  );

  app.post(
    '/chargers/:chargerId/retire',
    {
      schema: {
        summary: 'Retire a charger: refused from now on, its connection closed, history kept',
        tags: ['chargers'],
        params: objectParams('chargerId'),
        response: {
          200: {
            type: 'object',
            properties: { chargerId: { type: 'string' }, disconnected: { type: 'boolean' } },
            required: ['chargerId', 'disconnected'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
      ...operatorAction('charger.retire'),
    },
    async (request) => {
      const { chargerId } = request.params as { chargerId: string };
      const charger = deps.site.charger(chargerId);
      if (charger) {
        for (const c of charger.connectors.values()) {
          const open = deps.read.sessions.openOn(chargerId, c.id);
          if (open)
            throw new ApiError(
              'charger_busy',
              `session ${open.sessionId} is open on connector ${c.id}; retire after it ends`,
            );
        }
      }
      asApiError(() => deps.chargerRegistry.retire(chargerId, deps.clock.now()));
      const disconnected = deps.disconnect(chargerId, 'charger retired');
      return { chargerId, disconnected };
    },
  );
}
