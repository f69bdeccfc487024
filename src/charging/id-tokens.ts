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
 * The form a token is looked up in. OCPP compares identifiers case-insensitively (1.6 CiString,
 * 2.0.1 idToken), and some firmware keeps them in lower case: a token is ours whatever its case.
 * Only ASCII letters fold (the alphabet above): no other character can become one of ours. Tokens
 * are minted in upper case, so one key names at most one token: nothing is ever guessed.
 */
export function idTokenKey(idToken: string): string {
  return idToken.replace(/[a-z]+/g, (letters) => letters.toUpperCase());
}

/**
 * `ses_`, the creation millisecond in 12 hex digits, then 96 random bits: as unguessable as
 * before, and in time order, so the sessions table's id index takes each new session on its last
 * page instead of a random one (the same reason as ledger and outbox ids, src/shared/uuid7.ts).
 */
export function newSessionId(nowMs: number = Date.now()): string {
  return `ses_${nowMs.toString(16).padStart(12, '0')}${randomBytes(12).toString('base64url')}`;
}
