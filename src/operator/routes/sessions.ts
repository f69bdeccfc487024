import type { FastifyInstance } from 'fastify';
import { StopRecords } from '../../charging/stop-records.js';
import { sessionViewSchema } from '../../charging/session-view.js';
import type { OperatorDeps } from '../api.js';
import { notFound } from '../errors.js';
import { SESSION_STATES, type SessionFilter } from '../read-model/sessions.js';
import {
  anyObject,
  cursor,
  entityId,
  isoTime,
  limit,
  nullable,
  objectParams,
  ok,
  page,
  pageArgs,
  query,
} from '../schemas.js';
import { stoppedBy } from '../stopped-by.js';
import { STOP_LINES } from '../../charging/stop-line.js';
import { ledgerRow } from './money.js';

const states = SESSION_STATES.join('|');
export const sessionFilters = {
  state: { type: 'string', pattern: `^(${states})(,(${states}))*$` },
  chargerId: entityId,
  driverId: entityId,
  fleetId: entityId,
  from: isoTime,
  to: isoTime,
} as const;

export const sessionRow = {
  ...sessionViewSchema,
  properties: {
    ...sessionViewSchema.properties,
    fleetId: { type: 'string' },
    /** How it started: the app, or a tap of a card or vehicle. */
    origin: { type: 'string', enum: ['app', 'card', 'vehicle'] },
    /** The tap's token, masked to its last four characters; null for an app session. */
    token: nullable('string'),
    /** Started by the charger offline and reported late (docs/money.md). */
    startedOffline: { type: 'boolean' },
  },
  required: [...sessionViewSchema.required, 'fleetId', 'origin', 'token', 'startedOffline'],
} as const;

export interface SessionQuery {
  state?: string;
  chargerId?: string;
  driverId?: string;
  fleetId?: string;
  from?: string;
  to?: string;
  cursor?: string;
  limit?: string;
}

export function sessionFilter(q: SessionQuery): SessionFilter {
  return {
    states: q.state?.split(','),
    chargerId: q.chargerId,
    driverId: q.driverId,
    fleetId: q.fleetId,
    from: q.from,
    to: q.to,
  };
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

/** Sessions, newest first, and one session's whole story. */
export function registerSessionReads(app: FastifyInstance, deps: OperatorDeps): void {
  const { read } = deps;
  const stops = new StopRecords(deps.db);

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
      return read.sessions.page(sessionFilter(q), before, n);
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
                by: { type: 'string', enum: STOP_LINES },
                operatorId: nullable('string'),
                operatorName: nullable('string'),
                reason: nullable('string'),
                words: { type: 'string' },
                line: { type: ['string', 'null'], enum: [...STOP_LINES, null] },
                gapWh: nullable('integer'),
              },
              required: ['by', 'operatorId', 'operatorName', 'reason', 'words', 'line', 'gapWh'],
              additionalProperties: false,
            },
            stationChecks: {
              type: 'object',
              properties: {
                limit: {
                  type: ['object', 'null'],
                  properties: {
                    energyWh: { type: 'integer' },
                    costNgn: { type: 'integer' },
                    sentEnergyWh: nullable('integer'),
                    sentCostNgn: nullable('integer'),
                    confirmedEnergyWh: nullable('number'),
                    confirmedCostNgn: nullable('number'),
                    confirmedAt: nullable('string'),
                    tariffStatus: nullable('string'),
                  },
                  required: [
                    'energyWh',
                    'costNgn',
                    'sentEnergyWh',
                    'sentCostNgn',
                    'confirmedEnergyWh',
                    'confirmedCostNgn',
                    'confirmedAt',
                    'tariffStatus',
                  ],
                  additionalProperties: false,
                },
                costDifferences: {
                  type: 'array',
                  items: {
                    type: 'object',
                    properties: {
                      kind: { type: 'string', enum: ['running', 'final'] },
                      energyWh: { type: 'integer' },
                      stationNgn: { type: 'number' },
                      gatewayNgn: { type: 'integer' },
                      at: { type: 'string' },
                    },
                    required: ['kind', 'energyWh', 'stationNgn', 'gatewayNgn', 'at'],
                    additionalProperties: false,
                  },
                },
              },
              required: ['limit', 'costDifferences'],
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
            'stationChecks',
            'uplink',
            'timeline',
          ],
          additionalProperties: false,
        }),
      },
    },
    async (request) => {
      const { sessionId } = request.params as { sessionId: string };
      const found = read.sessions.one(sessionId);
      if (!found) throw notFound('session_not_found', `no session with id ${sessionId}`);
      const { transactionRef, tariff, ...session } = found;
      const ledger = read.ledger.page({ sessionId }, undefined, 10).items.reverse();
      const uplink = read.uplink.forSession(sessionId);
      const transaction = read.sessions.transaction(sessionId);
      const at = (time: string | null, kind: TimelineKind, event: string) =>
        time === null ? [] : [{ at: time, kind, event }];
      const asked = read.sessions.stopAsker(sessionId);
      const stopper = stoppedBy(session, asked, read.sessions.keptLine(sessionId));
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
        loss: read.losses.ofSession(session),
        stoppedBy: stopper,
        stationChecks: read.sessions.stationChecks(sessionId),
        uplink,
        timeline,
      };
    },
  );
}
