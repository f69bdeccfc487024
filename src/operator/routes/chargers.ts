import type { FastifyInstance } from 'fastify';
import { WHOLE_CHARGER } from '../../ocpp/charger-state/connector-state.js';
import type { OperatorDeps } from '../api.js';
import { notFound } from '../errors.js';
import { nullable, objectParams, ok } from '../schemas.js';

/** Who took it out of service, why and when; null while it is in service. */
const outOfService = {
  type: ['object', 'null'],
  properties: {
    by: { type: 'string' },
    reason: nullable('string'),
    at: { type: 'string' },
  },
  required: ['by', 'reason', 'at'],
  additionalProperties: false,
} as const;
const connectorRow = {
  type: 'object',
  properties: {
    connectorId: { type: 'string' },
    status: { type: 'string' },
    outOfService,
    errorCode: nullable('string'),
    socPercent: nullable('number'),
    session: {
      type: ['object', 'null'],
      properties: {
        sessionId: { type: 'string' },
        driverId: { type: 'string' },
        state: { type: 'string' },
      },
    },
    powerW: nullable('number'),
    energyWh: nullable('number'),
    meterAt: nullable('string'),
  },
  required: ['connectorId', 'status'],
  additionalProperties: false,
} as const;
const chargerRow = {
  type: 'object',
  properties: {
    chargerId: { type: 'string' },
    connected: { type: 'boolean' },
    securityProfile: { type: 'integer' },
    protocol: nullable('string'),
    vendor: nullable('string'),
    model: nullable('string'),
    serialNumber: nullable('string'),
    firmwareVersion: nullable('string'),
    bootedAt: nullable('string'),
    lastSeenAt: nullable('string'),
    deviations: {
      type: 'object',
      properties: {
        source: { type: 'string', enum: ['charger_deviations', 'ocpp_events'] },
        count: { type: 'integer' },
        kinds: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              kind: { type: 'string' },
              count: { type: 'integer' },
              firstSeen: { type: 'string' },
              lastSeen: { type: 'string' },
            },
          },
        },
      },
    },
    outOfService,
    connectors: { type: 'array', items: connectorRow },
  },
  required: ['chargerId', 'connected', 'securityProfile', 'deviations', 'connectors'],
  additionalProperties: false,
} as const;

/** The site's chargers as configured, each with its live state and connectors. */
export function registerChargerReads(app: FastifyInstance, deps: OperatorDeps): void {
  const { read } = deps;

  const chargerView = (chargerId: string) => {
    const charger = deps.site.charger(chargerId);
    if (!charger) return undefined;
    const info = read.chargers.info(chargerId);
    const held = read.chargers.outOfService(chargerId);
    return {
      chargerId,
      connected: deps.chargers.isOnline(chargerId),
      securityProfile: charger.securityProfile,
      protocol: info?.protocol ?? null,
      vendor: info?.vendor ?? null,
      model: info?.model ?? null,
      serialNumber: info?.serialNumber ?? null,
      firmwareVersion: info?.firmwareVersion ?? null,
      bootedAt: info?.bootedAt ?? null,
      lastSeenAt: info?.lastSeenAt ?? null,
      deviations: read.chargers.deviations(chargerId),
      outOfService: held.get(WHOLE_CHARGER) ?? null,
      connectors: [...charger.connectors.values()].map((c) => {
        const view = deps.chargers.connector(chargerId, c.id);
        const live = deps.live.connector(chargerId, c.id);
        return {
          connectorId: c.id,
          status: view.status,
          errorCode: view.errorCode,
          outOfService: held.get(c.id) ?? null,
          socPercent: view.socPercent,
          session: read.sessions.openOn(chargerId, c.id) ?? null,
          powerW: live?.powerW ?? null,
          energyWh: live?.energyWh ?? null,
          meterAt: live?.receivedAt ?? null,
        };
      }),
    };
  };

  app.get(
    '/chargers',
    {
      schema: {
        summary: 'Every charger of the site with its connectors',
        tags: ['site'],
        response: ok({
          type: 'object',
          properties: { chargers: { type: 'array', items: chargerRow } },
          required: ['chargers'],
          additionalProperties: false,
        }),
      },
    },
    async () => ({ chargers: deps.site.all().map((c) => chargerView(c.id)) }),
  );

  app.get(
    '/chargers/:chargerId',
    {
      schema: {
        summary: 'One charger, its connectors and the last things it did that were odd',
        tags: ['site'],
        params: objectParams('chargerId'),
        response: ok({
          ...chargerRow,
          properties: {
            ...chargerRow.properties,
            recentEvents: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  seq: { type: 'integer' },
                  action: { type: 'string' },
                  note: { type: 'string' },
                  at: { type: 'string' },
                },
              },
            },
            recentCalls: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  at: { type: 'string' },
                  action: { type: 'string' },
                  direction: { type: 'string', enum: ['in', 'out'] },
                  outcome: { type: 'string', enum: ['ok', 'error', 'timeout'] },
                  seconds: { type: 'number' },
                },
                required: ['at', 'action', 'direction', 'outcome', 'seconds'],
                additionalProperties: false,
              },
            },
          },
        }),
      },
    },
    async (request) => {
      const { chargerId } = request.params as { chargerId: string };
      const view = chargerView(chargerId);
      if (!view) throw notFound('charger_not_found', `no charger with id ${chargerId}`);
      return {
        ...view,
        recentEvents: read.chargers.recentEvents(chargerId, 50),
        recentCalls: deps.calls.of(chargerId),
      };
    },
  );
}
