import { randomBytes, scrypt, scryptSync, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Charger passwords (OCPP security profile 1 basic auth) are set by people on charger web pages,
 * so they are stored as scrypt hashes: `scrypt$N$r$p$salt$key`, salt and key in base64.
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
