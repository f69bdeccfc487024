import type { FastifyInstance } from 'fastify';
import { localPeriods } from '../../shared/time-zone.js';
import type { OperatorDeps } from '../api.js';
import { errorResponses } from '../schemas.js';

const figures = {
  type: 'object',
  properties: {
    sessions: { type: 'integer' },
    energyWh: { type: 'integer' },
    revenueNgn: { type: 'integer' },
  },
  required: ['sessions', 'energyWh', 'revenueNgn'],
  additionalProperties: false,
} as const;

const period = {
  type: 'object',
  properties: { from: { type: 'string' }, to: { type: 'string' } },
  required: ['from', 'to'],
  additionalProperties: false,
} as const;

/** Energy and revenue per charger for today and this month, counted in the site's time zone. */
export function registerEnergyRoutes(app: FastifyInstance, deps: OperatorDeps): void {
  app.get(
    '/energy',
    {
      schema: {
        summary: 'Energy (Wh) and revenue (NGN) per charger, today and this month (site time zone)',
        tags: ['site'],
        response: {
          200: {
            type: 'object',
            properties: {
              timeZone: { type: 'string' },
              today: period,
              month: period,
              chargers: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { chargerId: { type: 'string' }, today: figures, month: figures },
                  required: ['chargerId', 'today', 'month'],
                  additionalProperties: false,
                },
              },
              total: {
                type: 'object',
                properties: { today: figures, month: figures },
                required: ['today', 'month'],
                additionalProperties: false,
              },
            },
            required: ['timeZone', 'today', 'month', 'chargers', 'total'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
    },
    async () => {
      const timeZone = deps.settings.timeZone;
      const periods = localPeriods(deps.clock.now(), timeZone);
      const zero = { sessions: 0, energyWh: 0, revenueNgn: 0 };
      const of = (p: { from: string; to: string }) =>
        new Map(deps.read.sessions.energyByCharger(p.from, p.to).map((r) => [r.chargerId, r]));
      const today = of(periods.today);
      const month = of(periods.month);
      // Every configured charger, and any retired one that still earned this month.
      const ids = [...new Set([...deps.site.all().map((c) => c.id), ...month.keys()])].sort();
      const pick = (m: typeof today, id: string) => {
        const r = m.get(id);
        return r ? { sessions: r.sessions, energyWh: r.energyWh, revenueNgn: r.revenueNgn } : zero;
      };
      const chargers = ids.map((id) => ({
        chargerId: id,
        today: pick(today, id),
        month: pick(month, id),
      }));
      const sum = (key: 'today' | 'month') =>
        chargers.reduce(
          (t, c) => ({
            sessions: t.sessions + c[key].sessions,
            energyWh: t.energyWh + c[key].energyWh,
            revenueNgn: t.revenueNgn + c[key].revenueNgn,
          }),
          zero,
        );
      return {
        timeZone,
        ...periods,
        chargers,
        total: { today: sum('today'), month: sum('month') },
      };
    },
  );
}
