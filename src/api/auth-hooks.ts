import type { FastifyRequest } from 'fastify';
import type { ApiKeys } from '../auth/api-keys.js';
import type { DriverTokens } from '../auth/driver-tokens.js';
import { sha256Hex } from '../auth/secrets.js';
import type { KeyedRateLimiter } from '../shared/token-bucket.js';
import { ApiError } from './errors.js';

/** Splits `Authorization: <Scheme> <credential>`; the scheme is case-insensitive (RFC 9110). */
export function credential(request: FastifyRequest, scheme: string): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^([A-Za-z]+) +(\S+) *$/.exec(header);
  if (!match || match[1]?.toLowerCase() !== scheme.toLowerCase()) return null;
  return match[2] ?? null;
}

/**
 * Counts one request against a credential's bucket (keyed by its hash: the limiter holds no
 * secret). Only authenticated requests are counted, so nobody can use up someone else's budget.
 */
export function rateLimit(limiter: KeyedRateLimiter, secret: string, what: string): void {
  rateLimitHashed(limiter, sha256Hex(secret), what);
}

/** rateLimit() for a credential the caller has already hashed. */
function rateLimitHashed(limiter: KeyedRateLimiter, hash: string, what: string): void {
  const waitMs = limiter.take(hash);
  if (waitMs > 0) {
    const seconds = Math.ceil(waitMs / 1000);
    throw new ApiError('rate_limited', `too many ${what}; retry in ${seconds} s`, seconds);
  }
}

/** The fleet behind `Authorization: ApiKey <key>`; a driver token is never accepted here. */
export function fleetFromApiKey(
  request: FastifyRequest,
  apiKeys: ApiKeys,
  limiter: KeyedRateLimiter,
): string {
  const key = credential(request, 'ApiKey');
  const fleetId = key === null ? undefined : apiKeys.fleetFor(key);
  if (!fleetId) {
    throw new ApiError(
      'invalid_api_key',
      key === null ? 'Authorization: ApiKey <key> is required' : 'the API key is not valid',
    );
  }
  rateLimit(limiter, key as string, 'driver tokens minted with this API key');
  return fleetId;
}

/** The driver behind `Authorization: Bearer <token>`; an API key is never accepted here. */
export function driverFromToken(
  request: FastifyRequest,
  tokens: DriverTokens,
  limiter: KeyedRateLimiter,
): string {
  const token = credential(request, 'Bearer');
  if (token === null) {
    throw new ApiError('invalid_token', 'Authorization: Bearer <driver token> is required');
  }
  // One hash per request: the token lookup and the rate limiter share it.
  const hash = sha256Hex(token);
  const check = tokens.checkHash(hash);
  if (check.kind === 'expired') throw new ApiError('token_expired', 'the driver token has expired');
  if (check.kind === 'unknown')
    throw new ApiError('invalid_token', 'the driver token is not valid');
  rateLimitHashed(limiter, hash, 'requests with this driver token');
  return check.driverId;
}
