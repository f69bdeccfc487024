import { Readable } from 'node:stream';
import { StopRecords } from '../charging/stop-records.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { sessionViewSchema } from '../charging/session-view.js';
import { WHOLE_CHARGER } from '../ocpp/charger-state/connector-state.js';
import type { OperatorDeps } from './api.js';
import { csvRows } from './csv.js';
import { notFound } from './errors.js';
import { SESSION_STATES, type LedgerFilter, type SessionFilter } from './read-model.js';
import { entityId, errorResponses, objectParams } from './schemas.js';
import { stoppedBy } from './stopped-by.js';

const anyObject = { type: 'object', additionalProperties: true } as const;
const nullable = (t: string) => ({ type: [t, 'null'] }) as const;
const isoTime = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?Z)?$',
} as const;
const cursor = { type: 'string', pattern: '^[1-9][0-9]{0,15}$' } as const;
const limit = { type: 'string', pattern: '^([1-9]|[1-9][0-9]|[1-4][0-9]{2}|500)$' } as const;
const states = SESSION_STATES.join('|');
const sessionFilters = {
  state: { type: 'string', pattern: `^(${states})(,(${states}))*$` },
  chargerId: entityId,
  driverId: entityId,
  fleetId: entityId,
  from: isoTime,
  to: isoTime,
} as const;
const ledgerFilters = {
  driverId: entityId,
  fleetId: entityId,
  sessionId: entityId,
  kind: {
    type: 'string',
    enum: ['opening', 'top_up', 'adjustment', 'session_debit', 'session_refund', 'session_credit'],
  },
  from: isoTime,
  to: isoTime,
} as const;
const query = <P extends Record<string, unknown>>(properties: P) =>
  ({ type: 'object', properties, additionalProperties: false }) as const;
const page = <I>(items: I) =>
  ({
    type: 'object',
    properties: { items: { type: 'array', items }, nextCursor: nullable('string') },
    required: ['items', 'nextCursor'],
    additionalProperties: false,
  }) as const;
const ok = <S>(schema: S) => ({ 200: schema, ...errorResponses }) as const;

const sessionRow = {
  ...sessionViewSchema,
  properties: { ...sessionViewSchema.properties, fleetId: { type: 'string' } },
  required: [...sessionViewSchema.required, 'fleetId'],
} as const;
const ledgerRow = {
  type: 'object',
  properties: {
    seq: { type: 'integer' },
    id: { type: 'string' },
    driverId: { type: 'string' },
    fleetId: { type: 'string' },
    kind: { type: 'string' },
    amount: { type: 'integer' },
    balanceAfter: { type: 'integer' },
    sessionId: nullable('string'),
    reference: nullable('string'),
    createdAt: { type: 'string' },
    actor: nullable('string'),
    reason: nullable('string'),
  },
  required: ['seq', 'id', 'driverId', 'fleetId', 'kind', 'amount', 'balanceAfter', 'createdAt'],
  additionalProperties: false,
} as const;
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

interface SessionQuery {
  state?: string;
  chargerId?: string;
  driverId?: string;
  fleetId?: string;
  from?: string;
  to?: string;
  cursor?: string;
  limit?: string;
}

function sessionFilter(q: SessionQuery): SessionFilter {
  return {
    states: q.state?.split(','),
    chargerId: q.chargerId,
    driverId: q.driverId,
    fleetId: q.fleetId,
    from: q.from,
    to: q.to,
  };
}
const pageArgs = (q: { cursor?: string; limit?: string }) =>
  [q.cursor === undefined ? undefined : Number(q.cursor), Number(q.limit ?? 50)] as const;

function csv(reply: FastifyReply, name: string, lines: Iterable<string>): FastifyReply {
  return reply
    .type('text/csv; charset=utf-8; header=present')
    .header('content-disposition', `attachment; filename="${name}"`)
    .send(Readable.from(lines));
}

/** What a session's timeline entries are, for a page to draw them (the `event` says it in words). */
const TIMELINE_KINDS = [
  'remote_start',
  'charger_accepted',
  'charging',
  'stop_requested',
  'stop_attempt',
  'settled',
  'refunded',
  'ledger',
  'uplink',
] as const;
type TimelineKind = (typeof TIMELINE_KINDS)[number];

/** What a viewer may read: the site, its sessions, money and uplink. No secret is ever in it. */
export function registerReadRoutes(app: FastifyInstance, deps: OperatorDeps): void {
  const { read } = deps;
  const stops = new StopRecords(deps.db);

  const chargerView = (chargerId: string) => {
    const charger = deps.site.charger(chargerId);
    if (!charger) return undefined;
    const info = read.chargerInfo(chargerId);
    const held = read.outOfService(chargerId);
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
      deviations: read.deviations(chargerId),
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
          session: read.openSessionOn(chargerId, c.id) ?? null,
          powerW: live?.powerW ?? null,
          energyWh: live?.energyWh ?? null,
          meterAt: live?.receivedAt ?? null,
        };
      }),
    };
  };

  app.get(
    '/status',
    {
      schema: {
        summary: 'The site at a glance',
        tags: ['site'],
        response: ok({
          type: 'object',
          properties: {
            siteId: { type: 'string' },
            chargers: { type: 'integer' },
            chargersOnline: { type: 'integer' },
            openSessions: { type: 'integer' },
            outboxDepth: { type: 'integer' },
            uplink: anyObject,
          },
          required: ['siteId', 'chargers', 'chargersOnline', 'openSessions', 'outboxDepth'],
          additionalProperties: false,
        }),
      },
    },
    async () => {
      const health = deps.health() as {
        chargersOnline: number;
        outboxDepth: number;
        uplink: unknown;
      };
      return {
        siteId: deps.settings.siteId,
        chargers: deps.site.all().length,
        chargersOnline: health.chargersOnline,
        openSessions: read.openSessionCount(),
        outboxDepth: health.outboxDepth,
        uplink: health.uplink,
      };
    },
  );

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
        recentEvents: read.recentEvents(chargerId, 50),
        recentCalls: deps.calls.of(chargerId),
      };
    },
  );

  app.get(
    '/sessions',
    {
      schema: {
        summary: 'Sessions, newest first, filtered; pages follow nextCursor',
        tags: ['sessions'],
        querystring: query({ ...sessionFilters, cursor, limit }),
        response: ok(page(sessionRow)),
      },
    },
    async (request) => {
      const q = request.query as SessionQuery;
      const [before, n] = pageArgs(q);
      return read.sessions(sessionFilter(q), before, n);
    },
  );

  app.get(
    '/sessions/:sessionId',
    {
      schema: {
        summary: "A session's whole story: money, charger, meter, uplink",
        tags: ['sessions'],
        params: objectParams('sessionId'),
        response: ok({
          type: 'object',
          properties: {
            session: sessionRow,
            transactionRef: nullable('string'),
            /** The tariff version and window its price (fixed at Start) came from; null: older. */
            tariff: {
              type: ['object', 'null'],
              properties: {
                id: { type: 'string' },
                version: { type: 'integer' },
                window: nullable('string'),
              },
              required: ['id', 'version', 'window'],
              additionalProperties: false,
            },
            ledger: { type: 'array', items: ledgerRow },
            transaction: { type: ['object', 'null'], additionalProperties: true },
            meterSamples: { type: 'array', items: anyObject },
            meterSeries: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  at: { type: 'string' },
                  energyWh: nullable('integer'),
                  powerW: nullable('number'),
                  socPercent: nullable('number'),
                },
                required: ['at', 'energyWh', 'powerW', 'socPercent'],
                additionalProperties: false,
              },
            },
            loss: { type: ['object', 'null'], additionalProperties: true },
            stoppedBy: {
              type: ['object', 'null'],
              properties: {
                by: {
                  type: 'string',
                  enum: ['operator', 'paid_energy', 'driver', 'ev', 'charger', 'gateway'],
                },
                operatorId: nullable('string'),
                operatorName: nullable('string'),
                reason: nullable('string'),
                words: { type: 'string' },
              },
              required: ['by', 'operatorId', 'operatorName', 'reason', 'words'],
              additionalProperties: false,
            },
            uplink: { type: 'array', items: anyObject },
            timeline: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  at: { type: 'string' },
                  kind: { type: 'string', enum: TIMELINE_KINDS },
                  event: { type: 'string' },
                },
                required: ['at', 'kind', 'event'],
                additionalProperties: false,
              },
            },
          },
          required: [
            'session',
            'tariff',
            'ledger',
            'transaction',
            'meterSamples',
            'meterSeries',
            'loss',
            'stoppedBy',
            'uplink',
            'timeline',
          ],
          additionalProperties: false,
        }),
      },
    },
    async (request) => {
      const { sessionId } = request.params as { sessionId: string };
      const found = read.session(sessionId);
      if (!found) throw notFound('session_not_found', `no session with id ${sessionId}`);
      const { transactionRef, tariff, ...session } = found;
      const ledger = read.ledger({ sessionId }, undefined, 10).items.reverse();
      const uplink = read.outboxFor(sessionId);
      const transaction = read.transaction(sessionId);
      const at = (time: string | null, kind: TimelineKind, event: string) =>
        time === null ? [] : [{ at: time, kind, event }];
      const asked = read.stopAsker(sessionId);
      const stopper = stoppedBy(session, asked);
      const stopSent =
        asked?.origin === 'operator'
          ? `${stopper?.words ?? 'an operator'} stopped the session: stop sent`
          : asked?.origin === 'paid_energy'
            ? 'paid energy reached: stop sent'
            : 'stop sent';
      const ended = `${session.state} (${session.endReason ?? 'no reason given'})`;
      const timeline = [
        ...at(
          session.createdAt,
          'remote_start',
          `debited ${session.amount} NGN, remote start sent`,
        ),
        ...at(session.authorizedAt, 'charger_accepted', 'charger accepted the remote start'),
        ...at(session.startedAt, 'charging', `transaction ${transactionRef ?? ''} started`),
        ...at(session.stopRequestedAt, 'stop_requested', stopSent),
        ...at(
          session.endedAt,
          session.state === 'refunded' ? 'refunded' : 'settled',
          stopper ? `${ended}: stopped by ${stopper.words}` : ended,
        ),
        ...stops.attempts(sessionId).map((a) => ({
          at: a.sentAt,
          kind: 'stop_attempt' as const,
          event: `stop: ${a.step.replace('_', ' ')} (${a.reply.replace('_', ' ')})`,
        })),
        ...ledger.map((e) => ({
          at: e.createdAt,
          kind: 'ledger' as const,
          event: `ledger ${e.kind} ${e.amount} NGN`,
        })),
        ...uplink
          .filter((u) => u.sentAt !== null)
          .map((u) => ({
            at: u.sentAt as string,
            kind: 'uplink' as const,
            event: `published ${u.type} on ${u.topic}`,
          })),
      ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
      const meterSamples =
        transactionRef === null ? [] : deps.live.transaction(session.chargerId, transactionRef);
      // The session's own energy: the register less the transaction's start reading.
      const startWh =
        typeof transaction?.meterStartWh === 'number' ? transaction.meterStartWh : null;
      const meterSeries = meterSamples.map((m) => ({
        at: m.timestamp,
        energyWh:
          m.energyWh === null || startWh === null ? null : Math.max(0, m.energyWh - startWh),
        powerW: m.powerW,
        socPercent: m.socPercent,
      }));
      return {
        session,
        transactionRef,
        tariff,
        ledger,
        transaction,
        meterSamples,
        meterSeries,
        loss: read.sessionLoss(session),
        stoppedBy: stopper,
        uplink,
        timeline,
      };
    },
  );

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
    async () => ({ fleets: read.fleets() }),
  );

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
    async (request) => ({ drivers: read.drivers((request.query as { fleetId?: string }).fleetId) }),
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
      const row = driver && read.drivers(driver.fleetId).find((d) => d.driverId === driverId);
      if (!row) throw notFound('driver_not_found', `no driver with id ${driverId}`);
      return row;
    },
  );

  app.get(
    '/ledger',
    {
      schema: {
        summary: 'Ledger entries, newest first, filtered; pages follow nextCursor',
        tags: ['money'],
        querystring: query({ ...ledgerFilters, cursor, limit }),
        response: ok(page(ledgerRow)),
      },
    },
    async (request) => {
      const q = request.query as LedgerFilter & { cursor?: string; limit?: string };
      const [before, n] = pageArgs(q);
      const filter: LedgerFilter = {
        driverId: q.driverId,
        fleetId: q.fleetId,
        kind: q.kind,
        sessionId: q.sessionId,
        from: q.from,
        to: q.to,
      };
      return read.ledger(filter, before, n);
    },
  );

  app.get(
    '/uplink',
    {
      schema: {
        summary: 'The uplink: connection, outbox depth, rows per topic',
        tags: ['uplink'],
        response: ok({
          type: 'object',
          properties: {
            uplink: anyObject,
            outboxDepth: { type: 'integer' },
            topics: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  topic: { type: 'string' },
                  pending: { type: 'integer' },
                  sent: { type: 'integer' },
                },
                additionalProperties: false,
              },
            },
          },
          required: ['uplink', 'outboxDepth', 'topics'],
          additionalProperties: false,
        }),
      },
    },
    async () => {
      const health = deps.health() as { outboxDepth: number; uplink: Record<string, unknown> };
      return {
        uplink: health.uplink,
        outboxDepth: health.outboxDepth,
        topics: read.outboxByTopic(),
      };
    },
  );

  app.get(
    '/uplink/outbox',
    {
      schema: {
        summary: 'Outbox rows, newest first (pending=true: only those not yet published)',
        tags: ['uplink'],
        querystring: query({ pending: { type: 'string', enum: ['true', 'false'] }, cursor, limit }),
        response: ok(
          page({
            type: 'object',
            properties: {
              seq: { type: 'integer' },
              id: { type: 'string' },
              topic: { type: 'string' },
              type: nullable('string'),
              createdAt: { type: 'string' },
              sentAt: nullable('string'),
            },
            additionalProperties: false,
          }),
        ),
      },
    },
    async (request) => {
      const q = request.query as { pending?: string; cursor?: string; limit?: string };
      const [before, n] = pageArgs(q);
      return read.outbox(q.pending === 'true', before, n);
    },
  );

  app.get(
    '/losses',
    {
      schema: {
        summary: "The operator's losses: energy delivered beyond what was paid, per session",
        tags: ['money'],
        querystring: query({ chargerId: entityId, fleetId: entityId, from: isoTime, to: isoTime }),
        response: ok({
          type: 'object',
          properties: {
            beyondPaidWh: { type: 'integer' },
            beyondPaidNgn: { type: 'integer' },
            sessions: { type: 'array', items: anyObject },
          },
          required: ['beyondPaidWh', 'beyondPaidNgn', 'sessions'],
          additionalProperties: false,
        }),
      },
    },
    async (request) => read.losses(request.query as SessionFilter),
  );

  app.get(
    '/operators',
    {
      schema: {
        summary: 'Operators and their roles (never a credential)',
        tags: ['operator'],
        response: ok({
          type: 'object',
          properties: {
            operators: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  id: { type: 'string' },
                  name: { type: 'string' },
                  role: { type: 'string' },
                  createdAt: { type: 'string' },
                  revokedAt: nullable('string'),
                },
                additionalProperties: false,
              },
            },
          },
          required: ['operators'],
          additionalProperties: false,
        }),
      },
    },
    async () => ({ operators: deps.operators.list() }),
  );

  const csvResponse = {
    200: {
      description: 'RFC 4180 CSV with a header line, streamed',
      content: { 'text/csv': { schema: { type: 'string' } } },
    },
    ...errorResponses,
  };

  app.get(
    '/exports/sessions.csv',
    {
      schema: {
        summary: 'Sessions as CSV (same filters as /sessions, every page)',
        tags: ['sessions'],
        querystring: query(sessionFilters),
        response: csvResponse,
      },
      config: { audit: 'export.sessions' },
    },
    async (request, reply) => {
      const filter = sessionFilter(request.query as SessionQuery);
      return csv(
        reply,
        'sessions.csv',
        csvRows(
          [
            'sessionId',
            'fleetId',
            'driverId',
            'chargerId',
            'connectorId',
            'state',
            'amount',
            'pricePerKwh',
            'paidEnergyWh',
            'energyWh',
            'cost',
            'credited',
            'endReason',
            'createdAt',
            'startedAt',
            'endedAt',
          ],
          read.allSessions(filter),
        ),
      );
    },
  );

  app.get(
    '/exports/ledger.csv',
    {
      schema: {
        summary: 'Ledger entries as CSV (same filters as /ledger, every page)',
        tags: ['money'],
        querystring: query(ledgerFilters),
        response: csvResponse,
      },
      config: { audit: 'export.ledger' },
    },
    async (request, reply) =>
      csv(
        reply,
        'ledger.csv',
        csvRows(
          [
            'seq',
            'id',
            'fleetId',
            'driverId',
            'kind',
            'amount',
            'balanceAfter',
            'sessionId',
            'reference',
            'actor',
            'reason',
            'createdAt',
          ],
          read.allLedger(request.query as LedgerFilter),
        ),
      ),
  );
}
