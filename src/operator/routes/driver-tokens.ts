import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import type { BoundToken } from '../../id-tokens/id-token-store.js';
import { ID_TOKEN_TYPES } from '../../id-tokens/id-token-store.js';
import {
  MAX_BLOCK_REASON_LENGTH,
  MAX_RAW_TOKEN_LENGTH,
  MAX_TOKEN_LABEL_LENGTH,
  tokenValueProblem,
} from '../../id-tokens/token-input.js';
import { tokenState, type TokenBinding } from '../../fleet/token-changes.js';
import type { OperatorDeps } from '../api.js';
import { asApiError } from '../errors.js';
import { operatorAction } from '../guard.js';
import { nullable, objectParams, ok, query } from '../schemas.js';

/** A bound token as answers show it: masked, never its value or key (docs/driver-tokens.md). */
const tokenRow = {
  type: 'object',
  properties: {
    tokenId: { type: 'string' },
    driverId: { type: 'string' },
    kind: { type: 'string', enum: ['card', 'vehicle'] },
    type: { type: 'string', enum: ID_TOKEN_TYPES },
    masked: { type: 'string' },
    label: { type: 'string' },
    state: { type: 'string', enum: ['active', 'blocked', 'expired'] },
    expiresAt: nullable('string'),
    blockedAt: nullable('string'),
    blockedReason: nullable('string'),
    source: { type: 'string', enum: ['operator', 'cloud'] },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
  required: [
    'tokenId',
    'driverId',
    'kind',
    'type',
    'masked',
    'label',
    'state',
    'expiresAt',
    'blockedAt',
    'blockedReason',
    'source',
    'createdAt',
    'updatedAt',
  ],
  additionalProperties: false,
} as const;

const tokenList = ok({
  type: 'object',
  properties: { tokens: { type: 'array', items: tokenRow } },
  required: ['tokens'],
  additionalProperties: false,
});

const tokenChange = ok({
  type: 'object',
  properties: { changed: { type: 'boolean' }, token: tokenRow },
  required: ['changed', 'token'],
  additionalProperties: false,
});

const tokenParams = objectParams('driverId', 'tokenId');

function rowOf(t: BoundToken, nowMs: number) {
  return {
    tokenId: t.id,
    driverId: t.driverId,
    kind: t.kind,
    type: t.type,
    masked: t.masked,
    label: t.label,
    state: tokenState(t, nowMs),
    expiresAt: t.expiresAt,
    blockedAt: t.blockedAt,
    blockedReason: t.blockedReason,
    source: t.source,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

/** Drivers' cards and vehicles, and the search that finds one by any form a charger sends. */
export function registerTokenReads(app: FastifyInstance, deps: OperatorDeps): void {
  const tokens = deps.tokenChanges;

  app.get(
    '/drivers/:driverId/tokens',
    {
      schema: {
        summary: "A driver's bound cards and vehicles (masked)",
        tags: ['roster'],
        params: objectParams('driverId'),
        response: tokenList,
      },
    },
    async (request) => {
      const { driverId } = request.params as { driverId: string };
      const now = deps.clock.now();
      return { tokens: asApiError(() => tokens.ofDriver(driverId)).map((t) => rowOf(t, now)) };
    },
  );

  app.get(
    '/tokens',
    {
      schema: {
        summary: 'The bound token a card or vehicle is, found by any form of its value',
        tags: ['roster'],
        querystring: {
          ...query({ search: { type: 'string', minLength: 1, maxLength: MAX_RAW_TOKEN_LENGTH } }),
          required: ['search'],
        },
        response: tokenList,
      },
    },
    async (request) => {
      const { search } = request.query as { search: string };
      const token = tokenValueProblem(search) === null ? tokens.find(search) : undefined;
      return { tokens: token ? [rowOf(token, deps.clock.now())] : [] };
    },
  );
}

/** Binding, blocking and unbinding by hand at the site, each in the audit trail (masked). */
export function registerTokenWrites(app: FastifyInstance, deps: OperatorDeps): void {
  const tokens = deps.tokenChanges;
  const now = () => new Date(deps.clock.now()).toISOString();

  app.post(
    '/drivers/:driverId/tokens',
    {
      schema: {
        summary: 'Bind a card or vehicle to a driver (again: updates it; another driver’s: 409)',
        tags: ['roster'],
        params: objectParams('driverId'),
        body: {
          type: 'object',
          properties: {
            kind: { type: 'string', enum: ['card', 'vehicle'] },
            type: { type: 'string', enum: ID_TOKEN_TYPES },
            value: { type: 'string', minLength: 1, maxLength: MAX_RAW_TOKEN_LENGTH },
            label: { type: 'string', maxLength: MAX_TOKEN_LABEL_LENGTH },
            expiresAt: { type: ['string', 'null'], format: 'date-time' },
          },
          required: ['kind', 'type', 'value'],
          additionalProperties: false,
        },
        response: ok({
          type: 'object',
          properties: {
            created: { type: 'boolean' },
            changed: { type: 'boolean' },
            token: tokenRow,
            value: {
              type: 'string',
              description: 'The value as bound (trimmed): shown once, to the operator who bound it',
            },
          },
          required: ['created', 'changed', 'token', 'value'],
          additionalProperties: false,
        }),
      },
      ...operatorAction('token.bind', ['value']),
    },
    async (request) => {
      const { driverId } = request.params as { driverId: string };
      const body = request.body as Omit<TokenBinding, 'driverId'>;
      const problem = tokenValueProblem(body.value);
      if (problem !== null) throw new ApiError('invalid_request', `body/value: ${problem}`);
      if (typeof body.expiresAt === 'string')
        body.expiresAt = new Date(body.expiresAt).toISOString();
      const { token, created, changed } = deps.db.transaction(() =>
        asApiError(() => tokens.bind({ ...body, driverId }, 'operator', now())),
      )();
      request.auditResult = { tokenId: token.id, masked: token.masked, created, changed };
      return { created, changed, token: rowOf(token, deps.clock.now()), value: token.value };
    },
  );

  const blockRoute = (action: 'block' | 'unblock') =>
    app.post(
      `/drivers/:driverId/tokens/:tokenId/${action}`,
      {
        schema: {
          summary:
            action === 'block'
              ? 'Block a bound token (its taps are answered Blocked; reason optional)'
              : 'Unblock a bound token',
          tags: ['roster'],
          params: tokenParams,
          ...(action === 'block'
            ? {
                body: {
                  type: ['object', 'null'],
                  properties: {
                    reason: { type: 'string', minLength: 1, maxLength: MAX_BLOCK_REASON_LENGTH },
                  },
                  additionalProperties: false,
                },
              }
            : {}),
          response: tokenChange,
        },
        ...operatorAction(`token.${action}`),
      },
      async (request) => {
        const { driverId, tokenId } = request.params as { driverId: string; tokenId: string };
        const reason = (request.body as { reason?: string } | null | undefined)?.reason;
        return deps.db.transaction(() =>
          asApiError(() => {
            const token = tokens.tokenOf(driverId, tokenId);
            const block = action === 'block' ? { reason, source: 'operator' as const } : null;
            const { changed } = tokens.setBlocked(token, block, now());
            const after = tokens.tokenOf(driverId, tokenId);
            return { changed, token: rowOf(after, deps.clock.now()) };
          }),
        )();
      },
    );
  blockRoute('block');
  blockRoute('unblock');

  app.delete(
    '/drivers/:driverId/tokens/:tokenId',
    {
      schema: {
        summary: 'Unbind a token (its taps are answered Invalid; the sessions it paid keep it)',
        tags: ['roster'],
        params: tokenParams,
        response: ok({
          type: 'object',
          properties: { changed: { type: 'boolean' } },
          required: ['changed'],
          additionalProperties: false,
        }),
      },
      ...operatorAction('token.unbind'),
    },
    async (request) => {
      const { driverId, tokenId } = request.params as { driverId: string; tokenId: string };
      return deps.db.transaction(() =>
        asApiError(() => tokens.unbind(tokens.tokenOf(driverId, tokenId), now())),
      )();
    },
  );
}
