import { ApiError } from '../api/errors.js';
import { FleetAdminError } from '../fleet/admin.js';
import { OPERATOR_API_ERRORS, type OperatorApiErrorCode } from './error-catalogue.js';

/** Runs a change; a FleetAdminError becomes the API's error with its documented status. */
export function asApiError<T>(change: () => T): T {
  try {
    return change();
  } catch (err) {
    if (err instanceof FleetAdminError) {
      throw new ApiError(err.code, err.message);
    }
    throw err;
  }
}

/** The codes whose status is 404: `notFound` cannot answer anything else. */
type NotFoundCode = {
  [C in OperatorApiErrorCode]: (typeof OPERATOR_API_ERRORS)[C]['status'] extends 404 ? C : never;
}[OperatorApiErrorCode];

export function notFound(code: NotFoundCode, message: string): ApiError {
  return new ApiError(code, message);
}
