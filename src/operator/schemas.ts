import { errorBody, IDEMPOTENCY_KEY_HEADER, idempotencyKeyValue } from '../api/schemas.js';

/** Schema pieces every operator route shares. */
export const errorResponses = { '4xx': errorBody, '5xx': errorBody } as const;

/** An operator as answers show it (never its credential). */
export const operatorIdentity = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string', enum: ['viewer', 'operator'] },
  },
  required: ['id', 'name', 'role'],
  additionalProperties: false,
} as const;

export const entityId = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9._:@-]+$',
} as const;

/** Money actions need an `Idempotency-Key` (same format as the contract's Start). */
export const idempotencyHeaders = {
  type: 'object',
  properties: {
    [IDEMPOTENCY_KEY_HEADER]: idempotencyKeyValue,
  },
  required: [IDEMPOTENCY_KEY_HEADER],
} as const;

export const reason = { type: 'string', minLength: 1, maxLength: 500 } as const;

export const vehicle = {
  type: ['object', 'null'],
  properties: {
    model: { type: 'string', minLength: 1, maxLength: 100 },
    batteryKwh: { type: 'number', exclusiveMinimum: 0, maximum: 1000 },
  },
  required: ['model', 'batteryKwh'],
  additionalProperties: false,
} as const;

export const objectParams = <K extends string>(...names: K[]) =>
  ({
    type: 'object',
    properties: Object.fromEntries(names.map((n) => [n, entityId])) as Record<K, typeof entityId>,
    required: names,
    additionalProperties: false,
  }) as const;

export const anyObject = { type: 'object', additionalProperties: true } as const;
export const nullable = (t: string) => ({ type: [t, 'null'] }) as const;
export const isoTime = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?Z)?$',
} as const;
export const cursor = { type: 'string', pattern: '^[1-9][0-9]{0,15}$' } as const;
export const limit = {
  type: 'string',
  pattern: '^([1-9]|[1-9][0-9]|[1-4][0-9]{2}|500)$',
} as const;
export const query = <P extends Record<string, unknown>>(properties: P) =>
  ({ type: 'object', properties, additionalProperties: false }) as const;
/** A page of a list read: the next one is asked for with `cursor` = nextCursor. */
export const page = <I>(items: I) =>
  ({
    type: 'object',
    properties: { items: { type: 'array', items }, nextCursor: nullable('string') },
    required: ['items', 'nextCursor'],
    additionalProperties: false,
  }) as const;
export const ok = <S>(schema: S) => ({ 200: schema, ...errorResponses }) as const;
/** The page a (validated) `cursor` and `limit` ask for: before which row, how many. */
export const pageArgs = (q: { cursor?: string; limit?: string }) =>
  [q.cursor === undefined ? undefined : Number(q.cursor), Number(q.limit ?? 50)] as const;

/** What a roster change answers: whether it created the row, whether anything changed. */
export const changed = {
  200: {
    type: 'object',
    properties: { created: { type: 'boolean' }, changed: { type: 'boolean' } },
    required: ['changed'],
    additionalProperties: false,
  },
  ...errorResponses,
} as const;
