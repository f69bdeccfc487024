import type { FastifyRequest } from 'fastify';
import type { ApiKeys } from '../auth/api-keys.js';
import type { DriverTokens } from '../auth/driver-tokens.js';
import { ApiError } from './errors.js';

/** Splits `Authorization: <Scheme> <credential>`; the scheme is case-insensitive (RFC 9110). */
function credential(request: FastifyRequest, scheme: string): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^([A-Za-z]+) +(\S+) *$/.exec(header);
  if (!match || match[1]?.toLowerCase() !== scheme.toLowerCase()) return null;
  return match[2] ?? null;
}

/** The fleet behind `Authorization: ApiKey <key>`; a driver token is never accepted here. */
export function fleetFromApiKey(request: FastifyRequest, apiKeys: ApiKeys): string {
  const key = credential(request, 'ApiKey');
  const fleetId = key === null ? undefined : apiKeys.fleetFor(key);
  if (!fleetId) {
    throw new ApiError(
      401,
      'invalid_api_key',
      key === null ? 'Authorization: ApiKey <key> is required' : 'the API key is not valid',
    );
  }
  return fleetId;
}

/** The driver behind `Authorization: Bearer <token>`; an API key is never accepted here. */
export function driverFromToken(request: FastifyRequest, tokens: DriverTokens): string {
  const token = credential(request, 'Bearer');
  if (token === null) {
    throw new ApiError(401, 'invalid_token', 'Authorization: Bearer <driver token> is required');
  }
  const check = tokens.check(token);
  if (check.kind === 'expired')
    throw new ApiError(401, 'token_expired', 'the driver token has expired');
  if (check.kind === 'unknown')
    throw new ApiError(401, 'invalid_token', 'the driver token is not valid');
  return check.driverId;
}
