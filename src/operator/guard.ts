import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  roleAllows,
  type Operator,
  type OperatorCredentials,
  type OperatorRole,
} from '../auth/operator-credentials.js';
import { timingSafeEqual } from 'node:crypto';
import type { ConsoleLogins } from '../auth/console-logins.js';
import { credential } from '../api/auth-hooks.js';
import { readCookie } from '../api/cookies.js';
import { ApiError } from '../api/errors.js';
import type { Clock } from '../shared/clock.js';

/** The console's session cookie (its value is a random secret; the database keeps its hash). */
export const CONSOLE_COOKIE = 'fg_console';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated operator (set on every /admin/v1 request that got past the guard). */
    operator?: Operator;
    /** What an audited action adds to its audit record's result (ids it created, amounts). */
    auditResult?: Record<string, unknown>;
  }
  interface FastifyContextConfig {
    /** Name of the action in the audit trail; a route with it is recorded on every answer. */
    audit?: string;
    /** Body fields holding a driver's token: the trail keeps them masked (audit.ts). */
    auditMask?: readonly string[];
  }
}

/** What lets the guard accept a console login's cookie besides a Bearer credential. */
export interface CookieLogins {
  logins: ConsoleLogins;
  clock: Clock;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * A cookie rides along on any request the browser makes to this host, including one a page on
 * another site triggers: so a request that acts must also show the session's CSRF token (which
 * only the console's own script can read) and, when the browser names its Origin, come from
 * this host. GET and HEAD change nothing and need neither.
 */
export function checkCsrf(request: FastifyRequest, csrfToken: string): void {
  if (request.method === 'GET' || request.method === 'HEAD') return;
  const sent = request.headers['x-csrf-token'];
  if (typeof sent !== 'string' || !sameText(sent, csrfToken)) {
    throw new ApiError('csrf_failed', 'the x-csrf-token header does not match the login');
  }
  checkOrigin(request);
}

/** A browser's request names its Origin: it must be this host (403 csrf_failed otherwise). */
export function checkOrigin(request: FastifyRequest): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  let host: string | null;
  try {
    host = new URL(origin).host;
  } catch {
    host = null;
  }
  if (host === null || host !== request.headers.host) {
    throw new ApiError('csrf_failed', 'the request comes from another origin');
  }
}

/**
 * `Authorization: Bearer <operator credential>`, or (with `cookies`) the console's login cookie.
 * Only the operators table is consulted, so a driver token (also Bearer) or a fleet API key is
 * simply not a credential here: 401. An Authorization header wins over a cookie, so a script
 * with a credential is never judged by a browser's login.
 */
export function authenticate(operators: OperatorCredentials, cookies?: CookieLogins) {
  return async (request: FastifyRequest): Promise<void> => {
    const secret = credential(request, 'Bearer');
    const cookie =
      cookies && request.headers.authorization === undefined
        ? readCookie(request.headers.cookie, CONSOLE_COOKIE)
        : null;
    if (secret === null && cookie !== null && cookies) {
      const session = cookies.logins.find(cookie, cookies.clock.now());
      if (!session) {
        throw new ApiError(
          'invalid_operator_credential',
          'the console login has ended; log in again',
        );
      }
      checkCsrf(request, session.csrfToken);
      request.operator = session.operator;
      return;
    }
    const operator = secret === null ? undefined : operators.check(secret);
    if (!operator) {
      throw new ApiError(
        'invalid_operator_credential',
        secret === null
          ? 'Authorization: Bearer <operator credential> is required'
          : 'the operator credential is not valid',
      );
    }
    request.operator = operator;
  };
}

/**
 * preHandler that refuses an operator whose role is below `role` (403, recorded in the audit
 * trail when the route is audited). Use `requireRole('operator')` on every route that acts.
 */
export function requireRole(role: OperatorRole) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const operator = request.operator;
    if (!operator) throw new ApiError('invalid_operator_credential', 'not authenticated');
    if (!roleAllows(operator.role, role)) {
      throw new ApiError('forbidden', `the ${operator.role} role cannot do this`);
    }
  };
}

/**
 * Route options for an action: only operators may call it and every answer (success or not) is
 * recorded in the audit trail as `action`. Spread it into the route's options:
 *   app.post('/chargers/:chargerId/reset', { schema, ...operatorAction('charger.reset') }, handler)
 * A handler may add to the record's result with `request.auditResult = { … }` (never a secret;
 * secret-looking fields are redacted anyway).
 */
export function operatorAction(action: string, auditMask?: readonly string[]) {
  return {
    preHandler: requireRole('operator'),
    config: { audit: action, ...(auditMask ? { auditMask } : {}) },
  };
}
