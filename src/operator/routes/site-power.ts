import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import type { OperatorDeps } from '../api.js';
import { errorResponses } from '../schemas.js';

const kw = (watts: number) => watts / 1000;

const nodeSchema = {
  type: 'object',
  properties: {
    nodeId: { type: 'string' },
    limitKw: { type: 'number' },
    source: { type: 'string', enum: ['config', 'schedule', 'operator', 'feed', 'fallback'] },
    allocatedKw: { type: 'number' },
    measuredKw: { type: 'number' },
  },
  required: ['nodeId', 'limitKw', 'source', 'allocatedKw', 'measuredKw'],
  additionalProperties: false,
} as const;

const sessionSchema = {
  type: 'object',
  properties: {
    sessionId: { type: 'string' },
    chargerId: { type: 'string' },
    connectorId: { type: 'string' },
    state: { type: 'string', enum: ['allocated', 'waiting', 'unmanaged'] },
    allocatedKw: { type: 'number' },
    confirmedKw: { type: ['number', 'null'] },
    measuredKw: { type: ['number', 'null'] },
  },
  required: [
    'sessionId',
    'chargerId',
    'connectorId',
    'state',
    'allocatedKw',
    'confirmedKw',
    'measuredKw',
  ],
  additionalProperties: false,
} as const;

/**
 * The site's power at a glance: each node's limit (and what sets it), what the sessions on it are
 * allowed and what its meters said last; each drawing session's allowance and state.
 */
export function registerSitePowerRoutes(app: FastifyInstance, deps: OperatorDeps): void {
  app.get(
    '/site/power',
    {
      schema: {
        summary: 'Site power: limits, allocations and measured power',
        tags: ['load'],
        response: {
          200: {
            type: 'object',
            properties: {
              policy: { type: 'string', enum: ['equal', 'owed-weighted'] },
              nodes: { type: 'array', items: nodeSchema },
              sessions: { type: 'array', items: sessionSchema },
            },
            required: ['policy', 'nodes', 'sessions'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
    },
    async () => {
      const load = deps.load;
      if (!load) {
        throw new ApiError('power_not_configured', 'the site has no power limit (config power)');
      }
      const view = load.manager.view();
      return {
        policy: load.policy,
        nodes: view.nodes.map((n) => ({
          nodeId: n.nodeId,
          limitKw: kw(n.watts),
          source: n.source,
          allocatedKw: kw(n.allocatedW),
          measuredKw: kw(n.measuredW),
        })),
        sessions: view.sessions.map((s) => ({
          sessionId: s.sessionId,
          chargerId: s.chargerId,
          connectorId: s.connectorId,
          state: s.refusesProfiles ? 'unmanaged' : s.waiting ? 'waiting' : 'allocated',
          allocatedKw: kw(s.allocatedW),
          confirmedKw: s.confirmedW === null ? null : kw(s.confirmedW),
          measuredKw: s.measuredW === null ? null : kw(s.measuredW),
        })),
      };
    },
  );
}
