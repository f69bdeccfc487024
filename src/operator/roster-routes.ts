import type { FastifyInstance } from 'fastify';
import { ApiError } from '../api/errors.js';
import { keyIdOf } from '../auth/api-keys.js';
import type { VehicleInput } from '../fleet/admin.js';
import type { OperatorDeps } from './api.js';
import { asApiError, notFound } from './errors.js';
import { operatorAction } from './guard.js';
import { entityId, errorResponses, objectParams, vehicle } from './schemas.js';

const changed = {
  200: {
    type: 'object',
    properties: { created: { type: 'boolean' }, changed: { type: 'boolean' } },
    required: ['changed'],
    additionalProperties: false,
  },
  ...errorResponses,
} as const;

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

/** Fleets, drivers, vehicles and fleet API keys, changed by hand at the site. */
export function registerRosterRoutes(app: FastifyInstance, deps: OperatorDeps): void {
  const now = () => new Date(deps.clock.now()).toISOString();

  app.put(
    '/fleets/:fleetId',
    {
      schema: {
        summary: 'Rename a fleet, or create it with "create": true (an unknown id is 404 without)',
        tags: ['roster'],
        params: objectParams('fleetId'),
        body: {
          type: 'object',
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 200 },
            create: { type: 'boolean' },
          },
          required: ['name'],
          additionalProperties: false,
        },
        response: changed,
      },
      ...operatorAction('fleet.upsert'),
    },
    async (request) => {
      const { fleetId } = request.params as { fleetId: string };
      const { name, create } = request.body as { name: string; create?: boolean };
      return asApiError(() => deps.admin.putFleet(fleetId, name, create === true, now()));
    },
  );

  app.delete(
    '/fleets/:fleetId',
    {
      schema: {
        summary: 'Delete a fleet that has no drivers and no API keys',
        tags: ['roster'],
        params: objectParams('fleetId'),
        response: {
          200: {
            type: 'object',
            properties: { deleted: { type: 'boolean' } },
            required: ['deleted'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
      ...operatorAction('fleet.delete'),
    },
    async (request) => {
      const { fleetId } = request.params as { fleetId: string };
      return asApiError(() => deps.admin.deleteFleet(fleetId));
    },
  );

  app.put(
    '/drivers/:driverId',
    {
      schema: {
        summary: 'Add a driver or update one (email, active, vehicle)',
        tags: ['roster'],
        params: objectParams('driverId'),
        body: {
          type: 'object',
          properties: {
            fleetId: entityId,
            email: {
              type: 'string',
              minLength: 3,
              maxLength: 254,
              pattern: '^[^\\s@]+@[^\\s@]+$',
            },
            active: { type: 'boolean' },
            vehicle,
          },
          required: ['fleetId', 'email'],
          additionalProperties: false,
        },
        response: changed,
      },
      ...operatorAction('driver.upsert'),
    },
    async (request) => {
      const { driverId } = request.params as { driverId: string };
      const body = request.body as {
        fleetId: string;
        email: string;
        active?: boolean;
        vehicle?: VehicleInput | null;
      };
      const at = now();
      return deps.db.transaction(() =>
        asApiError(() => deps.admin.upsertDriver({ driverId, ...body }, at)),
      )();
    },
  );

  app.post(
    '/drivers/:driverId/deactivate',
    {
      schema: {
        summary: 'Deactivate a driver (no new tokens; the wallet stays)',
        tags: ['roster'],
        params: objectParams('driverId'),
        response: changed,
      },
      ...operatorAction('driver.deactivate'),
    },
    async (request) => {
      const { driverId } = request.params as { driverId: string };
      return asApiError(() => deps.admin.deactivateDriver(driverId, now()));
    },
  );

  app.put(
    '/drivers/:driverId/vehicle',
    {
      schema: {
        summary: 'Assign a vehicle to a driver (null removes it)',
        tags: ['roster'],
        params: objectParams('driverId'),
        body: {
          type: 'object',
          properties: { vehicle },
          required: ['vehicle'],
          additionalProperties: false,
        },
        response: changed,
      },
      ...operatorAction('driver.vehicle_assign'),
    },
    async (request) => {
      const { driverId } = request.params as { driverId: string };
      const body = request.body as { vehicle: VehicleInput | null };
      return asApiError(() => deps.admin.assignVehicle(driverId, body.vehicle, now()));
    },
  );

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
