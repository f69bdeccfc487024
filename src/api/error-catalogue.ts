/** A code's HTTP status, and the message sent when a throw gives none. */
export interface CatalogueEntry {
  readonly status: number;
  readonly message: string;
}

/**
 * Every `error.code` the driver API answers with (docs/api.md, Errors): the contract's codes
 * (/work/shared/service-interface.md, part 7) with its statuses, and those the contract leaves to
 * us. The status is decided here once; a throw names the code.
 */
export const DRIVER_API_ERRORS = {
  invalid_request: { status: 400, message: 'the request is not valid' },
  invalid_api_key: { status: 401, message: 'the API key is not valid' },
  invalid_token: { status: 401, message: 'the driver token is not valid' },
  token_expired: { status: 401, message: 'the driver token has expired' },
  insufficient_balance: { status: 402, message: 'the wallet holds less than the amount' },
  token_scope_mismatch: {
    status: 403,
    message: 'this token cannot act on another driver’s wallet',
  },
  driver_not_found: { status: 404, message: 'no such driver' },
  charger_not_found: { status: 404, message: 'no such charger' },
  connector_not_found: { status: 404, message: 'no such connector' },
  session_not_found: { status: 404, message: 'no such session' },
  not_found: { status: 404, message: 'no such route' },
  method_not_allowed: { status: 405, message: 'method not allowed' },
  request_timeout: { status: 408, message: 'the request headers took too long' },
  connector_unavailable: { status: 409, message: 'the connector cannot take a session now' },
  charger_rejected: { status: 409, message: 'the charger refused the remote start' },
  charger_unmetered: { status: 409, message: 'the charger cannot be held to a paid amount' },
  idempotency_key_in_progress: { status: 409, message: 'the first request with this key runs' },
  payload_too_large: { status: 413, message: 'the body is too large' },
  unsupported_media_type: { status: 415, message: 'unsupported media type' },
  expectation_failed: { status: 417, message: 'the only Expect supported is 100-continue' },
  idempotency_key_reused: {
    status: 422,
    message: 'the Idempotency-Key was used for another request',
  },
  rate_limited: { status: 429, message: 'too many requests' },
  headers_too_large: { status: 431, message: 'the request headers are too large' },
  internal_error: { status: 500, message: 'internal error' },
  charger_offline: { status: 503, message: 'the charger is not connected' },
  gateway_draining: { status: 503, message: 'the gateway is draining and takes no new start' },
  not_ready: { status: 503, message: 'the gateway is not ready' },
  charger_timeout: { status: 504, message: 'the charger did not answer in time' },
} as const satisfies Record<string, CatalogueEntry>;

export type DriverApiErrorCode = keyof typeof DRIVER_API_ERRORS;
