import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/**
 * A one-time token for one session: 20 characters, the most an OCPP 1.6 idTag may hold, 90 random
 * bits after the "FG" prefix. Unguessable, so a charger or a person cannot start a paid session
 * by replaying or inventing one.
 */
export function newIdToken(): string {
  const bytes = randomBytes(18);
  let out = 'FG';
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

export function newSessionId(): string {
  return `ses_${randomBytes(12).toString('base64url')}`;
}
