import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import { WEEKDAYS } from '../../shared/local-time.js';
import type { TariffRecord } from '../../config/tariff-book.js';
import type { TariffSpec } from '../../pricing/tariff.js';
import type { OperatorDeps } from '../api.js';
import { asApiError } from '../errors.js';
import { operatorAction } from '../guard.js';
import { errorResponses, objectParams } from '../schemas.js';

const price = { type: 'number', exclusiveMinimum: 0, maximum: 1_000_000 } as const;
const hhmm = { type: 'string', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$' } as const;

const windowSchema = {
  type: 'object',
  properties: {
    days: {
      type: 'array',
      items: { type: 'string', enum: [...WEEKDAYS] },
      minItems: 1,
      maxItems: 7,
      uniqueItems: true,
    },
    from: hhmm,
    to: hhmm,
    pricePerKwh: price,
  },
  required: ['days', 'from', 'to', 'pricePerKwh'],
  additionalProperties: false,
} as const;

const specSchema = {
  type: 'object',
  properties: {
    pricePerKwh: price,
    windows: { type: 'array', items: windowSchema, maxItems: 100 },
  },
  required: ['pricePerKwh'],
  additionalProperties: false,
} as const;

const tariffSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    version: { type: 'integer' },
    ...specSchema.properties,
    setBy: { type: 'string' },
    setAt: { type: 'string' },
    now: {
      type: 'object',
      properties: {
        pricePerKwh: { type: 'number' },
        window: { type: ['string', 'null'] },
        until: { type: ['string', 'null'] },
      },
      required: ['pricePerKwh', 'window', 'until'],
      additionalProperties: false,
    },
    connectors: { type: 'array', items: { type: 'string' } },
  },
  required: ['id', 'version', 'pricePerKwh', 'windows', 'setBy', 'setAt', 'now', 'connectors'],
  additionalProperties: false,
} as const;

/**
 * Tariffs at run time (docs/money.md, "Tariffs"): read them with the price in force now and the
 * connectors on each; create, replace (a new version) or delete one. Writes are refused while the
 * config file holds the tariffs (pricing.tariffSource: config).
 */
export function registerTariffRoutes(app: FastifyInstance, deps: OperatorDeps): void {
  const book = deps.tariffs;
  const params = objectParams('tariffId');

  const connectorsOn = (id: string): string[] =>
    deps.site
      .all()
      .flatMap((ch) =>
        [...ch.connectors.values()].filter((c) => c.tariffId === id).map((c) => `${ch.id}/${c.id}`),
      );
  const view = (r: TariffRecord) => {
    const now = book.priceAt(r.id, deps.clock.now());
    return {
      id: r.id,
      version: r.version,
      pricePerKwh: r.spec.pricePerKwh,
      windows: r.spec.windows,
      setBy: r.setBy,
      setAt: r.setAt,
      now: {
        pricePerKwh: (now?.microNgnPerWh ?? 0) / 1000,
        window: now?.window ?? null,
        until: now?.untilMs == null ? null : new Date(now.untilMs).toISOString(),
      },
      connectors: connectorsOn(r.id),
    };
  };
  const known = (id: string): TariffRecord => {
    const r = book.get(id);
    if (!r) throw new ApiError('tariff_not_found', `no tariff ${id}`);
    return r;
  };

  app.get(
    '/tariffs',
    {
      schema: {
        summary: 'Every tariff, with the price in force now and the connectors on it',
        tags: ['tariffs'],
        response: {
          200: {
            type: 'object',
            properties: {
              source: { type: 'string', enum: ['config', 'database'] },
              timeZone: { type: 'string' },
              tariffs: { type: 'array', items: tariffSchema },
            },
            required: ['source', 'timeZone', 'tariffs'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
    },
    async () => ({
      source: book.source,
      timeZone: deps.settings.timeZone,
      tariffs: book.list().map(view),
    }),
  );

  app.get(
    '/tariffs/:tariffId',
    {
      schema: {
        summary: 'One tariff',
        tags: ['tariffs'],
        params,
        response: { 200: tariffSchema, ...errorResponses },
      },
    },
    async (request) => view(known((request.params as { tariffId: string }).tariffId)),
  );

  app.put(
    '/tariffs/:tariffId',
    {
      schema: {
        summary: 'Create or replace a tariff; sessions already started keep their price',
        tags: ['tariffs'],
        params,
        body: specSchema,
        response: { 200: tariffSchema, ...errorResponses },
      },
      ...operatorAction('tariff.put'),
    },
    async (request) => {
      const { tariffId } = request.params as { tariffId: string };
      const body = request.body as { pricePerKwh: number; windows?: TariffSpec['windows'] };
      const at = new Date(deps.clock.now()).toISOString();
      const spec: TariffSpec = { pricePerKwh: body.pricePerKwh, windows: body.windows ?? [] };
      const record = asApiError(() =>
        book.put(tariffId, spec, request.operator?.name ?? 'unknown', at),
      );
      request.auditResult = { version: record.version };
      return view(record);
    },
  );

  app.delete(
    '/tariffs/:tariffId',
    {
      schema: {
        summary: 'Delete a tariff no connector uses',
        tags: ['tariffs'],
        params,
        response: {
          200: {
            type: 'object',
            properties: { id: { type: 'string' }, deleted: { type: 'boolean' } },
            required: ['id', 'deleted'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
      ...operatorAction('tariff.delete'),
    },
    async (request) => {
      const { tariffId } = request.params as { tariffId: string };
      known(tariffId);
      const on = connectorsOn(tariffId);
      if (on.length > 0) {
        throw new ApiError(
          'tariff_in_use',
          `tariff ${tariffId} is the tariff of ${on.join(', ')}: give them another one first`,
        );
      }
      const at = new Date(deps.clock.now()).toISOString();
      asApiError(() => book.remove(tariffId, request.operator?.name ?? 'unknown', at));
      return { id: tariffId, deleted: true };
    },
  );
}
