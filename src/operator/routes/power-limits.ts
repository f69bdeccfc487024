import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import type { Constraint, LimitBoard } from '../../power/limit-board.js';
import type { FeedStats, LimitFeed } from '../../power/limit-feed.js';
import type { PowerLimits } from '../../power/limit-sources.js';
import { kwToWatts } from '../../power/schedule.js';
import type { OperatorDeps } from '../api.js';
import { operatorAction } from '../guard.js';
import { errorResponses, objectParams, reason } from '../schemas.js';

/** The longest an override may be set ahead; beyond it, leave expiresAt out (until cleared). */
const MAX_EXPIRY_MS = 366 * 86_400_000;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const kw = (watts: number) => watts / 1000;

const constraintSchema = {
  type: 'object',
  properties: {
    source: { type: 'string', enum: ['config', 'schedule', 'operator', 'feed', 'fallback'] },
    limitKw: { type: 'number' },
    until: { type: ['string', 'null'] },
  },
  required: ['source', 'limitKw', 'until'],
  additionalProperties: false,
} as const;

const nodeSchema = {
  type: 'object',
  properties: {
    nodeId: { type: 'string' },
    limitKw: { type: 'number' },
    source: constraintSchema.properties.source,
    contractKw: { type: 'number' },
    constraints: { type: 'array', items: constraintSchema },
    override: {
      type: ['object', 'null'],
      properties: {
        limitKw: { type: 'number' },
        reason: { type: 'string' },
        expiresAt: { type: ['string', 'null'] },
        setBy: { type: 'string' },
        setAt: { type: 'string' },
      },
      required: ['limitKw', 'reason', 'expiresAt', 'setBy', 'setAt'],
      additionalProperties: false,
    },
  },
  required: ['nodeId', 'limitKw', 'source', 'contractKw', 'constraints', 'override'],
  additionalProperties: false,
} as const;

const count = { type: 'integer' } as const;
const feedSchema = {
  type: ['object', 'null'],
  properties: {
    topic: { type: 'string' },
    accepted: count,
    rejected: {
      type: 'object',
      properties: { not_json: count, invalid: count, unknown_node: count, retained: count },
      required: ['not_json', 'invalid', 'unknown_node', 'retained'],
      additionalProperties: false,
    },
    lastAcceptedAt: { type: ['string', 'null'] },
    readings: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          nodeId: { type: 'string' },
          limitKw: { type: 'number' },
          receivedAt: { type: 'string' },
          freshUntil: { type: 'string' },
          fresh: { type: 'boolean' },
        },
        required: ['nodeId', 'limitKw', 'receivedAt', 'freshUntil', 'fresh'],
        additionalProperties: false,
      },
    },
  },
  required: ['topic', 'accepted', 'rejected', 'lastAcceptedAt', 'readings'],
  additionalProperties: false,
} as const;

function constraintView(c: Constraint) {
  return { source: c.source, limitKw: kw(c.watts), until: iso(c.untilMs) };
}

export function nodeView(board: LimitBoard, nodeId: string) {
  const limit = board.limit(nodeId);
  const o = board.override(nodeId);
  return {
    nodeId,
    limitKw: kw(limit.watts),
    source: limit.source,
    contractKw: kw(board.contract(nodeId)),
    constraints: board.constraints(nodeId).map(constraintView),
    override: o
      ? {
          limitKw: kw(o.watts),
          reason: o.reason,
          expiresAt: iso(o.expiresAtMs),
          setBy: o.setBy,
          setAt: new Date(o.setAtMs).toISOString(),
        }
      : null,
  };
}

function feedView(feed: LimitFeed, board: LimitBoard, now: number) {
  const s: FeedStats = feed.stats();
  return {
    topic: feed.topic,
    accepted: s.accepted,
    rejected: s.rejected,
    lastAcceptedAt: iso(s.lastAcceptedAtMs),
    readings: board.feedReadings().map((r) => ({
      nodeId: r.nodeId,
      limitKw: kw(r.watts),
      receivedAt: new Date(r.receivedAtMs).toISOString(),
      freshUntil: new Date(r.freshUntilMs).toISOString(),
      fresh: now < r.freshUntilMs,
    })),
  };
}

/**
 * The site's run-time power limits: read every node's limit and what binds it; set or clear the
 * operator's own limit on a node. An operator limit only ever lowers a node (docs/load-management.md).
 */
export function registerPowerLimitRoutes(app: FastifyInstance, deps: OperatorDeps): void {
  const limits = (): PowerLimits => {
    if (!deps.powerLimits)
      throw new ApiError('power_not_configured', 'the site has no power limit (config power)');
    return deps.powerLimits;
  };
  const knownNode = (nodeId: string): LimitBoard => {
    const { board } = limits();
    if (!board.knows(nodeId)) throw new ApiError('node_not_found', `no site or circuit ${nodeId}`);
    return board;
  };
  const params = objectParams('nodeId');

  app.get(
    '/site/power/limits',
    {
      schema: {
        summary: 'Every node’s power limit, what binds it, and the limit feed',
        tags: ['load'],
        response: {
          200: {
            type: 'object',
            properties: {
              timeZone: { type: 'string' },
              nodes: { type: 'array', items: nodeSchema },
              feed: feedSchema,
            },
            required: ['timeZone', 'nodes', 'feed'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
    },
    async () => {
      const { board, feed, timeZone } = limits();
      return {
        timeZone,
        nodes: board.nodeIds.map((n) => nodeView(board, n)),
        feed: feed ? feedView(feed, board, deps.clock.now()) : null,
      };
    },
  );

  app.put(
    '/site/power/limits/:nodeId',
    {
      schema: {
        summary: 'Lower a node’s power limit (the site or a circuit), until cleared or expiresAt',
        tags: ['load'],
        params,
        body: {
          type: 'object',
          properties: {
            limitKw: { type: 'number', minimum: 0, maximum: 1_000_000 },
            reason,
            expiresAt: { type: 'string', format: 'date-time' },
          },
          required: ['limitKw', 'reason'],
          additionalProperties: false,
        },
        response: { 200: nodeSchema, ...errorResponses },
      },
      ...operatorAction('site.power.limit.set'),
    },
    async (request) => {
      const { nodeId } = request.params as { nodeId: string };
      const body = request.body as { limitKw: number; reason: string; expiresAt?: string };
      const board = knownNode(nodeId);
      const now = deps.clock.now();
      const watts = kwToWatts(body.limitKw);
      const contract = board.contract(nodeId);
      if (watts > contract) {
        throw new ApiError(
          'invalid_request',
          `limitKw is above ${nodeId}'s contracted ${kw(contract)} kW: a run-time limit only lowers it`,
        );
      }
      let expiresAtMs: number | null = null;
      if (body.expiresAt !== undefined) {
        expiresAtMs = Date.parse(body.expiresAt);
        if (!(expiresAtMs > now) || expiresAtMs - now > MAX_EXPIRY_MS) {
          throw new ApiError(
            'invalid_request',
            'expiresAt must be in the future and within a year (leave it out for no end)',
          );
        }
      }
      const operator = request.operator;
      board.setOverride({
        nodeId,
        watts,
        reason: body.reason,
        expiresAtMs,
        setBy: operator?.name ?? 'unknown',
        setAtMs: now,
      });
      const view = nodeView(board, nodeId);
      request.auditResult = { limitKw: view.limitKw, source: view.source };
      return view;
    },
  );

  app.delete(
    '/site/power/limits/:nodeId',
    {
      schema: {
        summary: 'Clear the operator’s power limit on a node',
        tags: ['load'],
        params,
        response: {
          200: {
            ...nodeSchema,
            properties: { ...nodeSchema.properties, cleared: { type: 'boolean' } },
            required: [...nodeSchema.required, 'cleared'],
          },
          ...errorResponses,
        },
      },
      ...operatorAction('site.power.limit.clear'),
    },
    async (request) => {
      const { nodeId } = request.params as { nodeId: string };
      const board = knownNode(nodeId);
      const cleared = board.clearOverride(nodeId);
      const view = nodeView(board, nodeId);
      request.auditResult = { cleared, limitKw: view.limitKw, source: view.source };
      return { ...view, cleared };
    },
  );
}
