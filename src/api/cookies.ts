/**
 * Just enough of RFC 6265 for the console's one cookie (no package for ~20 lines): the value of a
 * named cookie in a Cookie header, and a Set-Cookie line with the attributes we always want.
 */
export function readCookie(header: string | undefined, name: string): string | null {
  if (header === undefined) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return value === '' ? null : value;
  }
  return null;
}

export interface CookieOptions {
  /** Seconds; 0 deletes the cookie. */
  maxAgeSeconds: number;
  /** Only over HTTPS (set when the listener is TLS). */
  secure: boolean;
}

/** HttpOnly (no script reads it), SameSite=Strict (no other site sends it), whole-host path. */
export function setCookieHeader(name: string, value: string, options: CookieOptions): string {
  const parts = [
    `${name}=${value}`,
    'HttpOnly',
    'SameSite=Strict',
    'Path=/',
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
  ];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}
