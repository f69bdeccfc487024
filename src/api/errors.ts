import type { FastifyReply } from 'fastify';
import { ChargingError, type ChargingErrorCode } from '../charging/errors.js';
import { OPERATOR_API_ERRORS, type OperatorApiErrorCode } from './operator-error-catalogue.js';
import {
  DRIVER_API_ERRORS,
  type CatalogueEntry,
  type DriverApiErrorCode,
} from './error-catalogue.js';

/** A code of either surface's catalogue (error-catalogue.ts, operator-error-catalogue.ts). */
export type ApiErrorCode = DriverApiErrorCode | OperatorApiErrorCode;

// One class for both surfaces, so both catalogues live here, in the HTTP layer both build on (the
// operator API imports api/, never the other way). A code both answer with is one entry.
const CATALOGUE: Record<ApiErrorCode, CatalogueEntry> = {
  ...DRIVER_API_ERRORS,
  ...OPERATOR_API_ERRORS,
};

/** Every error the API answers with: the `error.code` in the body, its catalogue's HTTP status. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ApiErrorCode,
    /** The catalogue's message when left out. */
    message?: string,
    /** Sent as Retry-After (429, and 409 idempotency_key_in_progress). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message ?? CATALOGUE[code].message);
    this.status = CATALOGUE[code].status;
  }
}

/** The driver API's code for each charging refusal; an amount it cannot take is a bad request. */
const CHARGING_ERROR_CODES: Record<ChargingErrorCode, DriverApiErrorCode> = {
  driver_not_found: 'driver_not_found',
  charger_not_found: 'charger_not_found',
  connector_not_found: 'connector_not_found',
  connector_unavailable: 'connector_unavailable',
  charger_offline: 'charger_offline',
  charger_rejected: 'charger_rejected',
  charger_unmetered: 'charger_unmetered',
  charger_timeout: 'charger_timeout',
  insufficient_balance: 'insufficient_balance',
  invalid_amount: 'invalid_request',
  idempotency_key_reused: 'idempotency_key_reused',
  idempotency_key_in_progress: 'idempotency_key_in_progress',
  gateway_draining: 'gateway_draining',
};

/** The one place the driver API maps a domain error (a charging refusal) to its answer. */
export function driverApiError(err: unknown): unknown {
  if (!(err instanceof ChargingError)) return err;
  // The first attempt is waiting for its charger (at most ocpp.callTimeoutSeconds).
  const retryAfter = err.code === 'idempotency_key_in_progress' ? 1 : undefined;
  return new ApiError(CHARGING_ERROR_CODES[err.code], err.message, retryAfter);
}

/** Answers with a catalogue code: its status and `{ error: { code, message } }`. */
export function sendError(reply: FastifyReply, code: ApiErrorCode, message: string): FastifyReply {
  return answer(reply, CATALOGUE[code].status, code, message);
}

/** Answers with what an ApiError says. */
export function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  return answer(reply, error.status, error.code, error.message);
}

function answer(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  answeredCodes.set(reply, code);
  return reply.code(status).send({ error: { code, message } });
}

const answeredCodes = new WeakMap<FastifyReply, string>();

/** The `error.code` this reply was answered with (sendError), for the metrics' Start results. */
export function answeredErrorCode(reply: FastifyReply): string | undefined {
  return answeredCodes.get(reply);
}
