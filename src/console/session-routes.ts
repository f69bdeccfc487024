import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleLogins, ConsoleLogin } from '../auth/console-logins.js';
import type { Operator, OperatorCredentials } from '../auth/operator-credentials.js';
import { readCookie, setCookieHeader } from '../api/cookies.js';
import { ApiError } from '../api/errors.js';
import type { AuthThrottle } from '../ocpp/connection/auth-throttle.js';
import type { AuditTrail } from '../operator/audit.js';
import { checkCsrf, checkOrigin, CONSOLE_COOKIE } from '../operator/guard.js';
import { errorResponses, operatorIdentity } from '../operator/schemas.js';
import type { Clock } from '../shared/clock.js';

export interface ConsoleLoginOptions {
  operators: OperatorCredentials;
  logins: ConsoleLogins;
  audit: AuditTrail;
  clock: Clock;
  /** Failed logins per client address (the same back-off chargers' failed logins get). */
  throttle: AuthThrottle;
  sessionHours: number;
  /** The listener is HTTPS: the cookie is marked Secure. */
  tls: boolean;
  /** The site's IANA time zone: the console shows times in it. */
  timeZone: string;
}

const sessionBody = {
  type: 'object',
  properties: {
    operator: operatorIdentity,
    csrfToken: { type: 'string' },
    expiresAt: { type: 'string', format: 'date-time' },
    timeZone: { type: 'string' },
  },
  required: ['operator', 'csrfToken', 'expiresAt', 'timeZone'],
  additionalProperties: false,
} as const;

function answer(session: ConsoleLogin, timeZone: string) {
  return {
    operator: session.operator,
    csrfToken: session.csrfToken,
    expiresAt: new Date(session.expiresAtMs).toISOString(),
    timeZone,
  };
}

/** Failed logins have no operator yet: the trail names who the caller claimed to be. */
function claimed(name: string): Operator {
  return { id: '-', name: name.slice(0, 100), role: 'viewer' };
}

/**
 * The console's login: POST /console/session trades an operator's name and credential for a
 * session cookie (HttpOnly, SameSite=Strict, Secure over TLS) and a CSRF token; GET says who is
 * logged in; DELETE logs out. The cookie then works on all of /admin/v1 (guard.ts).
 */
export function registerConsoleLogin(app: FastifyInstance, o: ConsoleLoginOptions): void {
  const ttlMs = o.sessionHours * 3_600_000;
  const now = () => o.clock.now();
  const iso = () => new Date(now()).toISOString();
  const current = (request: FastifyRequest): { cookie: string; session: ConsoleLogin } => {
    const cookie = readCookie(request.headers.cookie, CONSOLE_COOKIE);
    const session = cookie === null ? undefined : o.logins.find(cookie, now());
    if (cookie === null || !session) {
      throw new ApiError('invalid_operator_credential', 'not logged in to the console');
    }
    return { cookie, session };
  };
  const clearCookie = (reply: FastifyReply) =>
    reply.header(
      'set-cookie',
      setCookieHeader(CONSOLE_COOKIE, '', { maxAgeSeconds: 0, secure: o.tls }),
    );

  app.post<{ Body: { name: string; credential: string } }>(
    '/console/session',
    {
      schema: {
        summary: 'Log in to the browser console (sets the fg_console cookie)',
        tags: ['console'],
        body: {
          type: 'object',
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 100 },
            credential: { type: 'string', minLength: 1, maxLength: 200 },
          },
          required: ['name', 'credential'],
          additionalProperties: false,
        },
        response: { 200: sessionBody, ...errorResponses },
      },
    },
    async (request, reply) => {
      // No page of another site may log this browser in (to an account of its choosing).
      checkOrigin(request);
      const address = request.socket.remoteAddress ?? 'unknown';
      const waitMs = o.throttle.waitLeft(address);
      if (waitMs > 0) {
        const seconds = Math.ceil(waitMs / 1000);
        throw new ApiError(
          'rate_limited',
          `too many failed logins from this address; retry in ${seconds} s`,
          seconds,
        );
      }
      const { name, credential } = request.body;
      const found = o.operators.check(credential);
      // The name must match too: a credential is one operator's, and the page shows the name.
      if (!found || found.name !== name) {
        o.throttle.failed(address);
        const error = { error: 'invalid_operator_credential' };
        o.audit.record(claimed(name), 'console.login', { name, address }, 401, error, iso());
        throw new ApiError(
          'invalid_operator_credential',
          'the operator name or credential is not valid',
        );
      }
      o.throttle.succeeded(address);
      const { cookie, login: session } = o.logins.open(found, now(), ttlMs);
      o.audit.record(found, 'console.login', { name, address }, 200, {}, iso());
      reply.header(
        'set-cookie',
        setCookieHeader(CONSOLE_COOKIE, cookie, { maxAgeSeconds: ttlMs / 1000, secure: o.tls }),
      );
      return answer(session, o.timeZone);
    },
  );

  app.get(
    '/console/session',
    {
      schema: {
        summary: 'The console login behind the cookie (401 when there is none)',
        tags: ['console'],
        response: { 200: sessionBody, ...errorResponses },
      },
    },
    async (request) => answer(current(request).session, o.timeZone),
  );

  app.delete(
    '/console/session',
    {
      schema: {
        summary: 'Log out of the browser console (the session ends on the server too)',
        tags: ['console'],
        response: { 204: { type: 'null' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const cookie = readCookie(request.headers.cookie, CONSOLE_COOKIE);
      const session = cookie === null ? undefined : o.logins.find(cookie, now());
      if (cookie === null || !session) return clearCookie(reply).code(204).send();
      // Logging out is an action: a page on another site must not end the login either.
      checkCsrf(request, session.csrfToken);
      o.logins.close(cookie);
      clearCookie(reply);
      o.audit.record(session.operator, 'console.logout', {}, 204, {}, iso());
      return reply.code(204).send();
    },
  );
}
