/**
 * Headers for an API no browser should render, frame or cache: responses are JSON for apps and
 * backends, so the strictest policies cost nothing. Every answer carries them, also the ones
 * written before fastify sees a request (src/api/edge-answers.ts).
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

const WITH_HSTS: Readonly<Record<string, string>> = {
  ...SECURITY_HEADERS,
  'strict-transport-security': 'max-age=31536000',
};

export function securityHeaders(tls: boolean): Readonly<Record<string, string>> {
  return tls ? WITH_HSTS : SECURITY_HEADERS;
}

/**
 * The browser console's policy (served on the operator listener): its own script, style, images
 * and API only, no inline script or style, never framed. The page and its assets carry it; the
 * JSON answers keep the API's stricter one.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
