import {
  createHmac,
  createSecretKey,
  randomBytes,
  scrypt,
  scryptSync,
  timingSafeEqual,
  type KeyObject,
  type ScryptOptions,
} from 'node:crypto';

/**
 * Charger passwords (OCPP security profile 1 basic auth) set by people on charger web pages are
 * stored as scrypt hashes: `scrypt$N$r$p$salt$key`, salt and key in base64. Keys the gateway
 * generates (`generateChargerKey`) are 192 random bits: no guess list shortens a search of that,
 * so they are stored as `hmac-sha256$salt$mac` and checked in microseconds, which lets a whole
 * site reconnect at once after a restart (docs/security.md, "Charger passwords").
 */
const SCRYPT = { N: 16384, r: 8, p: 1, keyLen: 32 };

/** OCPP's BasicAuthPassword / AuthorizationKey length, in characters (bytes on the wire). */
export const PASSWORD_MIN_LENGTH = 16;
export const PASSWORD_MAX_LENGTH = 40;

export class PasswordLengthError extends Error {
  constructor() {
    super(`charger passwords must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
  }
}

/** Random bytes of a generated charger key: 192 bits, 32 base64url characters. */
const GENERATED_KEY_BYTES = 24;
const GENERATED_KEY_LENGTH = Math.ceil((GENERATED_KEY_BYTES * 4) / 3);
const HMAC_PREFIX = 'hmac-sha256';

/** A new charger key and its stored form (the key is shown once and never stored). */
export function generateChargerKey(): { key: string; hash: string } {
  const key = randomBytes(GENERATED_KEY_BYTES).toString('base64url');
  const salt = randomBytes(16);
  return {
    key,
    hash: `${HMAC_PREFIX}$${salt.toString('base64')}$${mac(key, salt).toString('base64')}`,
  };
}

/** Whether a stored credential is a generated key's (else a chosen password's scrypt hash). */
export function isGeneratedKeyHash(stored: string): boolean {
  return stored.startsWith(`${HMAC_PREFIX}$`);
}

function mac(key: Buffer | string, salt: Buffer | KeyObject): Buffer {
  return createHmac('sha256', salt).update(key).digest();
}

/**
 * The HMAC key object of each stored salt: making one from bytes is four fifths of a check's
 * CPU (measured: 9.6 µs a MAC from a Buffer, 1.7 µs from a KeyObject), paid thousands of times in
 * a reconnect storm. A salt is not secret; the cache is bounded by the site's credentials and
 * starts over if something offers more.
 */
const saltKeys = new Map<string, KeyObject>();
const SALT_KEYS_MAX = 20_000;

function saltKey(saltB64: string): KeyObject {
  let key = saltKeys.get(saltB64);
  if (key === undefined) {
    if (saltKeys.size >= SALT_KEYS_MAX) saltKeys.clear();
    key = createSecretKey(Buffer.from(saltB64, 'base64'));
    saltKeys.set(saltB64, key);
  }
  return key;
}

export function hashPassword(password: string): string {
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
    throw new PasswordLengthError();
  }
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, SCRYPT.keyLen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/**
 * Checks a password against its stored hash. Asynchronous: scrypt takes tens of milliseconds, and a
 * site's chargers all reconnect at once after a restart, so it must not block the event loop.
 */
export async function verifyPassword(password: Buffer | string, stored: string): Promise<boolean> {
  // No stored password can have another length, so this costs a guesser an answer, not a scrypt.
  // (A Buffer counts UTF-8 bytes: 40 characters are at most 160 of them.)
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH * 4) {
    return false;
  }
  const parts = stored.split('$');
  if (parts[0] === HMAC_PREFIX) return verifyGeneratedKey(password, parts);
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, saltB64, keyB64] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(keyB64, 'base64');
  try {
    const actual = await scryptAsync(password, Buffer.from(saltB64, 'base64'), expected.length, {
      N: Number(n),
      r: Number(r),
      p: Number(p),
    });
    return timingSafeEqual(actual, expected);
  } catch {
    return false;
  }
}

function scryptAsync(
  password: Buffer | string,
  salt: Buffer,
  keyLen: number,
  options: ScryptOptions,
): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keyLen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/**
 * Only a string of a generated key's length can be one; anything else is refused without a MAC,
 * so this verifier never stands in for scrypt on a shorter, human-chosen secret.
 */
function verifyGeneratedKey(password: Buffer | string, parts: string[]): boolean {
  if (parts.length !== 3 || password.length !== GENERATED_KEY_LENGTH) return false;
  const expected = Buffer.from(parts[2] ?? '', 'base64');
  const actual = mac(password, saltKey(parts[1] ?? ''));
  return expected.length === actual.length && timingSafeEqual(actual, expected);
}
