export type ChargingErrorCode =
  | 'driver_not_found'
  | 'charger_not_found'
  | 'connector_not_found'
  | 'connector_unavailable'
  | 'charger_offline'
  | 'charger_rejected'
  | 'charger_unmetered'
  | 'charger_timeout'
  | 'insufficient_balance'
  | 'invalid_amount'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_progress'
  | 'gateway_draining';

/** A refusal the caller can act on; the driver API maps its code to an answer (src/api/errors.ts). */
export class ChargingError extends Error {
  constructor(
    readonly code: ChargingErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A write refused by a UNIQUE index or constraint: the schema's last guard against a race. */
export function isUniqueViolation(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    'code' in err &&
    (err as { code: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE'
  );
}
