import type { FastifyReply } from 'fastify';
import type { ChargingErrorCode } from '../charging/errors.js';

/** Every error the API answers with, its HTTP status and the `error.code` in the body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Sent as Retry-After (429). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export const CHARGING_ERROR_STATUS: Record<ChargingErrorCode, { status: number; code: string }> = {
  driver_not_found: { status: 404, code: 'driver_not_found' },
  charger_not_found: { status: 404, code: 'charger_not_found' },
  connector_not_found: { status: 404, code: 'connector_not_found' },
  connector_unavailable: { status: 409, code: 'connector_unavailable' },
  charger_offline: { status: 503, code: 'charger_offline' },
  charger_rejected: { status: 409, code: 'charger_rejected' },
  charger_unmetered: { status: 409, code: 'charger_unmetered' },
  charger_timeout: { status: 504, code: 'charger_timeout' },
  insufficient_balance: { status: 402, code: 'insufficient_balance' },
  invalid_amount: { status: 400, code: 'invalid_request' },
  idempotency_key_reused: { status: 422, code: 'idempotency_key_reused' },
  idempotency_key_in_progress: { status: 409, code: 'idempotency_key_in_progress' },
  gateway_draining: { status: 503, code: 'gateway_draining' },
};

export function sendError(
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
): FastifyReply {
  answeredCodes.set(reply, code);
  return reply.code(status).send({ error: { code, message } });
}

const answeredCodes = new WeakMap<FastifyReply, string>();

/** The `error.code` this reply was answered with (sendError), for the metrics' Start results. */
export function answeredErrorCode(reply: FastifyReply): string | undefined {
  return answeredCodes.get(reply);
}
