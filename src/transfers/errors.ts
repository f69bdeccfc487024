export type TransferErrorCode =
  | 'not_found'
  | 'file_not_found'
  | 'job_not_found'
  | 'job_finished'
  | 'file_in_use'
  | 'invalid_signature'
  | 'charger_not_found'
  | 'charger_busy'
  | 'already_uploaded'
  | 'url_expired'
  | 'payload_too_large'
  | 'charger_offline'
  | 'charger_timeout';

/** A transfer refused; the HTTP layer maps its code (src/operator/errors.ts, operatorApiError). */
export class TransferError extends Error {
  constructor(
    readonly code: TransferErrorCode,
    message: string,
  ) {
    super(message);
  }
}
