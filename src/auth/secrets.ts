import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * High-entropy secrets (API keys, driver tokens) are stored as SHA-256: a lookup by hash reveals
 * nothing, and a slow hash adds nothing when the secret has 256 random bits. (Charger passwords are
 * chosen by people and get scrypt: ocpp/connection/charger-password.ts.)
 */
export function sha256Hex(secret: string): string {
  // The one-shot digest: a fraction of createHash()'s cost, paid on every authenticated request.
  return hash('sha256', secret, 'hex');
}

export function randomSecret(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

export function sameHash(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
