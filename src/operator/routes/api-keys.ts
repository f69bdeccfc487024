import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import { keyIdOf } from '../../auth/api-keys.js';
import type { OperatorDeps } from '../api.js';
import { notFound } from '../errors.js';
import { operatorAction } from '../guard.js';
import { entityId, errorResponses, objectParams } from '../schemas.js';

const apiKeyInfo = {
  type: 'object',
  properties: {
    keyId: { type: 'string' },
    label: { type: 'string' },
    createdAt: { type: 'string' },
    revokeAt: { type: ['string', 'null'] },
    state: { type: 'string', enum: ['active', 'expiring', 'revoked'] },
  },
  required: ['keyId', 'label', 'createdAt', 'revokeAt', 'state'],
  additionalProperties: false,
} as const;

const newKey = {
  200: {
    type: 'object',
    properties: {
      keyId: { type: 'string' },
      apiKey: { type: 'string', description: 'Shown once; stored only as its SHA-256.' },
      replacedKeyId: { type: 'string' },
      replacedKeyRevokeAt: { type: 'string' },
    },
    required: ['keyId', 'apiKey'],
    additionalProperties: false,
  },
  ...errorResponses,
} as const;

const label = { type: 'string', minLength: 1, maxLength: 100 } as const;
const keyParams = {
  type: 'object',
  properties: { fleetId: entityId, keyId: { type: 'string', pattern: '^[0-9a-f]{8,64}$' } },
  required: ['fleetId', 'keyId'],
  additionalProperties: false,
} as const;

/** A fleet's API keys: listed, created, rotated and revoked by hand at the site. */
export function registerApiKeyRoutes(app: FastifyInstance, deps: OperatorDeps): void {
  const now = () => new Date(deps.clock.now()).toISOString();

  const fleetMustExist = (fleetId: string) => {
    if (!deps.roster.hasFleet(fleetId))
      throw notFound('fleet_not_found', `no fleet with id ${fleetId}`);
  };
  const keyMustExist = (fleetId: string, keyId: string) => {
    fleetMustExist(fleetId);
    const key = deps.apiKeys.byId(fleetId, keyId);
    if (!key)
      throw notFound('api_key_not_found', `fleet ${fleetId} has no single key with id ${keyId}`);
    return key;
  };

  app.get(
    '/fleets/:fleetId/api-keys',
    {
      schema: {
        summary: "A fleet's API keys by key id (never the key or its hash)",
        tags: ['roster'],
        params: objectParams('fleetId'),
        response: {
          200: {
            type: 'object',
            properties: { apiKeys: { type: 'array', items: apiKeyInfo } },
            required: ['apiKeys'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { fleetId } = request.params as { fleetId: string };
      fleetMustExist(fleetId);
      const nowMs = deps.clock.now();
      return {
        apiKeys: deps.apiKeys.list(fleetId).map((k) => ({
          keyId: k.keyId,
          label: k.label,
          createdAt: k.createdAt,
          revokeAt: k.revokeAt,
          state:
            k.revokeAt === null
              ? 'active'
              : Date.parse(k.revokeAt) <= nowMs
                ? 'revoked'
                : 'expiring',
        })),
      };
    },
  );

  app.post(
    '/fleets/:fleetId/api-keys',
    {
      schema: {
        summary: 'Create a fleet API key; the key is in this answer only',
        tags: ['roster'],
        params: objectParams('fleetId'),
        body: {
          type: 'object',
          properties: { label },
          additionalProperties: false,
        },
        response: newKey,
      },
      ...operatorAction('api_key.create'),
    },
    async (request) => {
      const { fleetId } = request.params as { fleetId: string };
      const body = (request.body ?? {}) as { label?: string };
      fleetMustExist(fleetId);
      const apiKey = deps.apiKeys.create(fleetId, body.label ?? 'operator', now());
      const keyId = keyIdOf(apiKey);
      request.auditResult = { keyId };
      return { keyId, apiKey };
    },
  );

  app.post(
    '/fleets/:fleetId/api-keys/:keyId/rotate',
    {
      schema: {
        summary: 'A new key for an old one; both work during the overlap',
        tags: ['roster'],
        params: keyParams,
        body: {
          type: 'object',
          properties: { label, overlapHours: { type: 'number', minimum: 0, maximum: 8760 } },
          additionalProperties: false,
        },
        response: newKey,
      },
      ...operatorAction('api_key.rotate'),
    },
    async (request) => {
      const { fleetId, keyId } = request.params as { fleetId: string; keyId: string };
      const body = (request.body ?? {}) as { label?: string; overlapHours?: number };
      const old = keyMustExist(fleetId, keyId);
      const nowMs = deps.clock.now();
      if (old.revokeAt !== null && Date.parse(old.revokeAt) <= nowMs)
        throw new ApiError('api_key_revoked', `key ${old.keyId} is already revoked`);
      const hours = body.overlapHours ?? deps.settings.apiKeyOverlapHours;
      const revokeAtMs = nowMs + Math.round(hours * 3_600_000);
      const apiKey = deps.apiKeys.rotate(
        fleetId,
        old.keyHash,
        body.label ?? 'rotated',
        revokeAtMs,
        new Date(nowMs).toISOString(),
      );
      const result = {
        keyId: keyIdOf(apiKey),
        replacedKeyId: old.keyId,
        replacedKeyRevokeAt: new Date(revokeAtMs).toISOString(),
      };
      request.auditResult = result;
      return { ...result, apiKey };
    },
  );

  app.post(
    '/fleets/:fleetId/api-keys/:keyId/revoke',
    {
      schema: {
        summary: 'Stop accepting a key now',
        tags: ['roster'],
        params: keyParams,
        response: {
          200: {
            type: 'object',
            properties: { keyId: { type: 'string' }, revokedAt: { type: 'string' } },
            required: ['keyId', 'revokedAt'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
      ...operatorAction('api_key.revoke'),
    },
    async (request) => {
      const { fleetId, keyId } = request.params as { fleetId: string; keyId: string };
      const key = keyMustExist(fleetId, keyId);
      const nowMs = deps.clock.now();
      const at = new Date(nowMs).toISOString();
      deps.apiKeys.revokeHash(key.keyHash, nowMs, at);
      return { keyId: key.keyId, revokedAt: at };
    },
  );
}
