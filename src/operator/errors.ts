import { ApiError } from '../api/errors.js';
import { FleetChangeError } from '../fleet/fleet-changes.js';

const FLEET_ADMIN_STATUS: Record<FleetChangeError['code'], number> = {
  driver_not_found: 404,
  fleet_not_found: 404,
  driver_in_other_fleet: 409,
  email_taken: 409,
  fleet_not_empty: 409,
  insufficient_balance: 402,
};

/** Runs a change; a FleetChangeError becomes the API's error with its documented status. */
export function asApiError<T>(change: () => T): T {
  try {
    return change();
  } catch (err) {
    if (err instanceof FleetChangeError) {
      throw new ApiError(FLEET_ADMIN_STATUS[err.code], err.code, err.message);
    }
    throw err;
  }
}

export function notFound(code: string, message: string): ApiError {
  return new ApiError(404, code, message);
}
