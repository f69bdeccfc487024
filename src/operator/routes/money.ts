import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IDEMPOTENCY_KEY_HEADER } from '../../api/schemas.js';
import type { OperatorDeps } from '../api.js';
import { asApiError } from '../errors.js';
import { operatorAction } from '../guard.js';
import type { LedgerFilter } from '../read-model/ledger.js';
import type { SessionFilter } from '../read-model/sessions.js';
import {
  anyObject,
  cursor,
  entityId,
  errorResponses,
  idempotencyHeaders,
  isoTime,
  limit,
  nullable,
  objectParams,
  ok,
  page,
  pageArgs,
  query,
  reason,
} from '../schemas.js';

export const ledgerFilters = {
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
export const ledgerRow = {
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

/** The ledger, newest first, filtered and paged. */
export function registerLedgerRead(app: FastifyInstance, deps: OperatorDeps): void {
  const { read } = deps;

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
      return read.ledger.page(filter, before, n);
    },
  );
}

/** What the operator lost: energy delivered beyond what was paid. */
export function registerLossesRead(app: FastifyInstance, deps: OperatorDeps): void {
  const { read } = deps;

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
    async (request) => read.losses.all(request.query as SessionFilter),
  );
}

const MAX_MONEY = 100_000_000;

const moneyResponse = {
  200: {
    type: 'object',
    properties: {
      ledgerEntryId: { type: 'string' },
      driverId: { type: 'string' },
      kind: { type: 'string', enum: ['top_up', 'adjustment'] },
      amount: { type: 'integer' },
      balanceAfter: { type: 'integer' },
      reference: { type: 'string' },
      reason: { type: ['string', 'null'] },
    },
    required: ['ledgerEntryId', 'driverId', 'kind', 'amount', 'balanceAfter', 'reference'],
    additionalProperties: false,
  },
  ...errorResponses,
} as const;

interface MoneyBody {
  amount: number;
  reason?: string;
}

/**
 * Money without the cloud: an operator tops up or adjusts a driver's wallet. The same code as the
 * uplink's top_up/adjustment commands moves the money (FleetChanges → Wallet: one ledger entry, its
 * outbox row, published like any other); the entry carries the operator and the reason.
 */
export function registerMoneyRoutes(app: FastifyInstance, deps: OperatorDeps): void {
  const move =
    (kind: 'top_up' | 'adjustment') =>
    async (request: FastifyRequest, reply: FastifyReply): Promise<Record<string, unknown>> => {
      const { driverId } = request.params as { driverId: string };
      const body = request.body as MoneyBody;
      const key = request.headers[IDEMPOTENCY_KEY_HEADER] as string;
      const operator = request.operator;
      if (!operator) throw new Error('operator routes run after authentication');
      const at = new Date(deps.clock.now()).toISOString();
      const reference = `op:${key}`;
      const answer = deps.requests.once(
        key,
        `wallet.${kind}`,
        { driverId, ...body },
        operator.id,
        at,
        () =>
          asApiError(() => {
            const moved = deps.fleetChanges.moveMoney(driverId, kind, body.amount, reference, at, {
              actor: `operator:${operator.name}`,
              reason: body.reason ?? 'top-up at the site',
            });
            return { ...moved, driverId, kind, reference, reason: body.reason ?? null };
          }),
      );
      if (answer.replayed) reply.header('idempotent-replayed', 'true');
      request.auditResult = {
        ledgerEntryId: answer.body.ledgerEntryId,
        balanceAfter: answer.body.balanceAfter,
        replayed: answer.replayed,
      };
      request.log.info(
        { operator: operator.name, driverId, kind, amount: body.amount, replayed: answer.replayed },
        'operator moved money',
      );
      return answer.body;
    };

  app.post(
    '/drivers/:driverId/top-ups',
    {
      schema: {
        summary: "Top up a driver's wallet (idempotent by Idempotency-Key)",
        tags: ['money'],
        params: objectParams('driverId'),
        headers: idempotencyHeaders,
        body: {
          type: 'object',
          properties: {
            amount: { type: 'integer', minimum: 1, maximum: MAX_MONEY },
            reason,
          },
          required: ['amount'],
          additionalProperties: false,
        },
        response: moneyResponse,
      },
      ...operatorAction('wallet.top_up'),
    },
    move('top_up'),
  );

  app.post(
    '/drivers/:driverId/adjustments',
    {
      schema: {
        summary: "Adjust a driver's wallet up or down, never below zero (idempotent)",
        tags: ['money'],
        params: objectParams('driverId'),
        headers: idempotencyHeaders,
        body: {
          type: 'object',
          properties: {
            amount: {
              type: 'integer',
              minimum: -MAX_MONEY,
              maximum: MAX_MONEY,
              not: { const: 0 },
            },
            reason,
          },
          required: ['amount', 'reason'],
          additionalProperties: false,
        },
        response: moneyResponse,
      },
      ...operatorAction('wallet.adjustment'),
    },
    move('adjustment'),
  );
}
