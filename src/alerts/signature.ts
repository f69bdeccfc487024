import { createHmac, timingSafeEqual } from 'node:crypto';

/** The webhook's headers (docs/alerts.md says how a receiver checks them). */
export const SIGNATURE_HEADER = 'x-fleetgw-signature';
export const TIMESTAMP_HEADER = 'x-fleetgw-timestamp';
export const EVENT_ID_HEADER = 'x-fleetgw-event-id';

/**
 * `sha256=` and the hex HMAC-SHA256, keyed with the shared secret, of the timestamp (Unix
 * seconds), a dot and the raw body: a receiver that refuses old timestamps refuses replays, and
 * the timestamp cannot be changed without the key.
 */
export function signature(secret: string, timestamp: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')}`;
}

/** What a receiver does: same signature, compared in constant time, and a recent timestamp. */
export function verifySignature(
  secret: string,
  headers: { signature: string; timestamp: string },
  rawBody: string,
  nowMs: number,
  toleranceSeconds = 300,
): boolean {
  const seconds = Number(headers.timestamp);
  if (!Number.isInteger(seconds) || Math.abs(nowMs / 1000 - seconds) > toleranceSeconds) {
    return false;
  }
  const expected = Buffer.from(signature(secret, headers.timestamp, rawBody));
  const given = Buffer.from(headers.signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
