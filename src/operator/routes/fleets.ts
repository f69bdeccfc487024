import type { FastifyInstance } from 'fastify';
import type { OperatorDeps } from '../api.js';
import { asApiError } from '../errors.js';
import { operatorAction } from '../guard.js';
import { changed, errorResponses, objectParams, ok } from '../schemas.js';

/** Fleets with their drivers and wallet totals. */
export function registerFleetReads(app: FastifyInstance, deps: OperatorDeps): void {
  const { read } = deps;

  app.get(
    '/fleets',
    {
      schema: {
        summary: 'Fleets with their drivers and wallet totals',
        tags: ['money'],
        response: ok({
          type: 'object',
          properties: {
            fleets: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  fleetId: { type: 'string' },
                  name: { type: 'string' },
                  createdAt: { type: 'string' },
                  drivers: { type: 'integer' },
                  activeDrivers: { type: 'integer' },
                  walletTotal: { type: 'integer' },
                },
                additionalProperties: false,
              },
            },
          },
          required: ['fleets'],
          additionalProperties: false,
        }),
      },
    },
    async () => ({ fleets: read.roster.fleets() }),
  );
}

/** Fleets created, renamed and deleted by hand at the site. */
export function registerFleetWrites(app: FastifyInstance, deps: OperatorDeps): void {
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
      return asApiError(() => deps.fleetChanges.putFleet(fleetId, name, create === true, now()));
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
      return asApiError(() => deps.fleetChanges.deleteFleet(fleetId));
    },
  );
}
