import { sessionViewSchema } from '../charging/session-view.js';

/**
 * JSON schemas of the three routes. Validation is strict: no type coercion, no removal of unknown
 * fields (the app's Ajv options turn both off), every listed field required.
 */
const id = { type: 'string', minLength: 1, maxLength: 64 } as const;
const email = { type: 'string', minLength: 3, maxLength: 254 } as const;
export const errorBody = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' } },
      required: ['code', 'message'],
    },
  },
  required: ['error'],
} as const;

export const mintTokenSchema = {
  body: {
    type: 'object',
    properties: { driverEmail: email },
    required: ['driverEmail'],
    additionalProperties: false,
  },
  response: {
    200: {
      type: 'object',
      properties: { token: { type: 'string' }, expiresAt: { type: 'string' } },
      required: ['token', 'expiresAt'],
      additionalProperties: false,
    },
    '4xx': errorBody,
    '5xx': errorBody,
  },
} as const;

export const quoteSchema = {
  body: {
    type: 'object',
    properties: { chargerId: id, connectorId: id, driverEmail: email },
    required: ['chargerId', 'connectorId', 'driverEmail'],
    additionalProperties: false,
  },
  response: {
    200: {
      type: 'object',
      properties: {
        fleetDriver: { type: 'boolean' },
        quotedAmount: { type: 'integer' },
        currency: { type: 'string' },
        subWalletBalance: { type: 'integer' },
        socPercent: { type: 'number' },
        vehicleModel: { type: 'string' },
        socSource: { type: 'string' },
        socReportedAt: { type: ['string', 'null'] },
        energyWh: { type: 'integer' },
        pricePerKwh: { type: 'number' },
        priceValidUntil: { type: ['string', 'null'] },
        /** Under site load management: minutes to deliver energyWh at the allocation now. */
        estimatedMinutes: { type: 'integer' },
      },
      required: [
        'fleetDriver',
        'quotedAmount',
        'currency',
        'subWalletBalance',
        'socPercent',
        'vehicleModel',
      ],
      additionalProperties: false,
    },
    '4xx': errorBody,
    '5xx': errorBody,
  },
} as const;

/** GET /v1/sessions/{sessionId}: the driver follows a session it started (read-only). */
export const sessionReadSchema = {
  params: {
    type: 'object',
    properties: { sessionId: { type: 'string', minLength: 1, maxLength: 64 } },
    required: ['sessionId'],
    additionalProperties: false,
  },
  response: { 200: sessionViewSchema, '4xx': errorBody, '5xx': errorBody },
} as const;

/**
 * `Idempotency-Key` (optional): 1 to 255 visible ASCII characters, no spaces (a UUID fits).
 * Node joins a repeated header with ", ", so sending it twice is refused here too.
 */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const idempotencyKeyValue = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x21-\\x7E]+$',
} as const;

export function startSchema(maxAmount: number) {
  return {
    headers: {
      type: 'object',
      properties: {
        [IDEMPOTENCY_KEY_HEADER]: idempotencyKeyValue,
      },
    },
    body: {
      type: 'object',
      properties: {
        chargerId: id,
        connectorId: id,
        driverEmail: email,
        amount: { type: 'integer', minimum: 1, maximum: maxAmount },
      },
      required: ['chargerId', 'connectorId', 'driverEmail', 'amount'],
      additionalProperties: false,
    },
    response: {
      200: {
        type: 'object',
        properties: {
          sessionId: { type: 'string' },
          debited: { type: 'integer' },
          remainingBalance: { type: 'integer' },
        },
        required: ['sessionId', 'debited', 'remainingBalance'],
        additionalProperties: false,
      },
      '4xx': errorBody,
      '5xx': errorBody,
    },
  } as const;
}

export interface MintTokenBody {
  driverEmail: string;
}
export interface QuoteBody {
  chargerId: string;
  connectorId: string;
  driverEmail: string;
}
export interface StartBody extends QuoteBody {
  amount: number;
}

/** Strict validation: fastify's defaults coerce types and strip unknown fields; we refuse both. */
export const STRICT_AJV_OPTIONS = {
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: false,
  allErrors: false,
} as const;
