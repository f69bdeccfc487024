import { DRIVER_API_ERRORS, type CatalogueEntry } from './error-catalogue.js';

const shared = DRIVER_API_ERRORS;

/**
 * Every `error.code` the operator's listener answers with (docs/operator-api.md, Errors): the
 * operator API, the console login, and the routes beside them (transfers for chargers, metrics).
 * A code the driver API has too is its entry, so the two surfaces cannot disagree on it.
 */
export const OPERATOR_API_ERRORS = {
  invalid_request: shared.invalid_request,
  unknown_tariff: { status: 400, message: 'no such tariff' },
  invalid_operator_credential: { status: 401, message: 'not authenticated' },
  invalid_metrics_token: { status: 401, message: 'the metrics token is not valid' },
  insufficient_balance: shared.insufficient_balance,
  forbidden: { status: 403, message: 'this role cannot do this' },
  csrf_failed: { status: 403, message: 'the request failed the CSRF check' },
  not_found: shared.not_found,
  driver_not_found: shared.driver_not_found,
  charger_not_found: shared.charger_not_found,
  connector_not_found: shared.connector_not_found,
  session_not_found: shared.session_not_found,
  fleet_not_found: { status: 404, message: 'no such fleet' },
  api_key_not_found: { status: 404, message: 'no such API key' },
  node_not_found: { status: 404, message: 'no such site or circuit' },
  power_not_configured: { status: 404, message: 'the site has no power limit' },
  alert_not_found: { status: 404, message: 'no such alert' },
  event_not_found: { status: 404, message: 'no such webhook event' },
  tariff_not_found: { status: 404, message: 'no such tariff' },
  file_not_found: { status: 404, message: 'no such file' },
  job_not_found: { status: 404, message: 'no such job' },
  token_not_found: { status: 404, message: 'the driver has no such bound token' },
  driver_in_other_fleet: { status: 409, message: 'the driver belongs to another fleet' },
  email_taken: { status: 409, message: 'another driver has this email' },
  token_bound_elsewhere: {
    status: 409,
    message: 'the token is bound to another driver: unbind it there first',
  },
  fleet_not_empty: { status: 409, message: 'the fleet still has drivers' },
  api_key_revoked: { status: 409, message: 'the API key is already revoked' },
  charger_exists: { status: 409, message: 'a charger with this id exists' },
  charger_busy: { status: 409, message: 'the charger has an open session or transfer' },
  session_not_stoppable: { status: 409, message: 'only a charging session can be stopped' },
  tariff_in_use: { status: 409, message: 'connectors still use this tariff' },
  tariffs_in_config: { status: 409, message: 'the tariffs are set in the config file' },
  webhook_not_configured: { status: 409, message: 'the site has no alert webhook' },
  job_finished: { status: 409, message: 'the job has finished' },
  file_in_use: { status: 409, message: 'an unfinished job uses this file' },
  already_uploaded: { status: 409, message: 'this upload URL has been used' },
  url_expired: { status: 410, message: 'this transfer URL has expired' },
  request_timeout: shared.request_timeout,
  payload_too_large: shared.payload_too_large,
  unsupported_media_type: shared.unsupported_media_type,
  expectation_failed: shared.expectation_failed,
  idempotency_key_reused: shared.idempotency_key_reused,
  invalid_signature: {
    status: 422,
    message: 'the signature does not verify over the file with the certificate’s key',
  },
  config_key_not_allowed: { status: 422, message: 'operators may not change this setting' },
  rate_limited: shared.rate_limited,
  headers_too_large: shared.headers_too_large,
  internal_error: shared.internal_error,
  charger_offline: shared.charger_offline,
  charger_timeout: shared.charger_timeout,
} as const satisfies Record<string, CatalogueEntry>;

export type OperatorApiErrorCode = keyof typeof OPERATOR_API_ERRORS;
