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
