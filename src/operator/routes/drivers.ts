import type { FastifyInstance } from 'fastify';
import type { VehicleInput } from '../../fleet/fleet-changes.js';
import type { OperatorDeps } from '../api.js';
import { asApiError, notFound } from '../errors.js';
import { operatorAction } from '../guard.js';
import { changed, entityId, nullable, objectParams, ok, query, vehicle } from '../schemas.js';

const driverRow = {
  type: 'object',
  properties: {
    driverId: { type: 'string' },
    fleetId: { type: 'string' },
    email: { type: 'string' },
    active: { type: 'boolean' },
    vehicleModel: nullable('string'),
    vehicleBatteryWh: nullable('integer'),
    balance: { type: 'integer' },
    openSessionId: nullable('string'),
  },
  required: ['driverId', 'fleetId', 'email', 'active', 'balance'],
  additionalProperties: false,
} as const;

/** Drivers with their wallet balance. */
export function registerDriverReads(app: FastifyInstance, deps: OperatorDeps): void {
  const { read } = deps;

  app.get(
    '/drivers',
    {
      schema: {
        summary: 'Drivers with their wallet balance (optionally of one fleet)',
        tags: ['money'],
        querystring: query({ fleetId: entityId }),
        response: ok({
          type: 'object',
          properties: { drivers: { type: 'array', items: driverRow } },
          required: ['drivers'],
          additionalProperties: false,
        }),
      },
    },
    async (request) => ({
      drivers: read.roster.drivers((request.query as { fleetId?: string }).fleetId),
    }),
  );

  app.get(
    '/drivers/:driverId',
    {
      schema: {
        summary: 'One driver, wallet balance and open session',
        tags: ['money'],
        params: objectParams('driverId'),
        response: ok(driverRow),
      },
    },
    async (request) => {
      const { driverId } = request.params as { driverId: string };
      const driver = deps.roster.driver(driverId);
      const row =
        driver && read.roster.drivers(driver.fleetId).find((d) => d.driverId === driverId);
      if (!row) throw notFound('driver_not_found', `no driver with id ${driverId}`);
      return row;
    },
  );
}

/** Drivers and their vehicles, added and changed by hand at the site. */
export function registerDriverWrites(app: FastifyInstance, deps: OperatorDeps): void {
  const now = () => new Date(deps.clock.now()).toISOString();

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
        asApiError(() => deps.fleetChanges.upsertDriver({ driverId, ...body }, at)),
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
      return asApiError(() => deps.fleetChanges.deactivateDriver(driverId, now()));
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
      return asApiError(() => deps.fleetChanges.assignVehicle(driverId, body.vehicle, now()));
    },
  );
}
