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

/**
 * `ses_`, the creation millisecond in 12 hex digits, then 96 random bits: as unguessable as
 * before, and in time order, so the sessions table's id index takes each new session on its last
 * page instead of a random one (the same reason as ledger and outbox ids, src/shared/uuid7.ts).
 */
export function newSessionId(nowMs: number = Date.now()): string {
  return `ses_${nowMs.toString(16).padStart(12, '0')}${randomBytes(12).toString('base64url')}`;
}
