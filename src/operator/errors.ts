import { ApiError } from '../api/errors.js';
import { ChargerRegistryError } from '../config/charger-registry.js';
import { TariffBookError } from '../config/tariff-book.js';
import { FleetChangeError } from '../fleet/fleet-changes.js';
import { TransferError } from '../transfers/errors.js';
import { OPERATOR_API_ERRORS, type OperatorApiErrorCode } from '../api/operator-error-catalogue.js';

/**
 * The one place the operator API maps a domain error to its answer (the code's status is in
 * api/operator-error-catalogue.ts); anything else is returned as it came.
 */
export function operatorApiError(err: unknown): unknown {
  if (
    err instanceof FleetChangeError ||
    err instanceof ChargerRegistryError ||
    err instanceof TransferError
  ) {
    return new ApiError(err.code, err.message);
  }
  if (err instanceof TariffBookError) {
    // Only the config's tariffs are a conflict; anything else the book refuses is the request's.
    return new ApiError(
      err.code === 'tariffs_in_config' ? err.code : 'invalid_request',
      err.message,
    );
  }
  return err;
}

/** Runs a change; a domain error it throws (or its promise rejects with) becomes the API's. */
export function asApiError<T>(change: () => T): T {
  try {
    const result = change();
    if (!(result instanceof Promise)) return result;
    return result.catch((err: unknown) => {
      throw operatorApiError(err);
    }) as T;
  } catch (err) {
    throw operatorApiError(err);
  }
}

/** The codes whose status is 404: `notFound` cannot answer anything else. */
type NotFoundCode = {
  [C in OperatorApiErrorCode]: (typeof OPERATOR_API_ERRORS)[C]['status'] extends 404 ? C : never;
}[OperatorApiErrorCode];

export function notFound(code: NotFoundCode, message: string): ApiError {
  return new ApiError(code, message);
}
