import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  roleAllows,
  type Operator,
  type OperatorCredentials,
  type OperatorRole,
} from '../auth/operator-credentials.js';
import { credential } from '../api/auth-hooks.js';
import { ApiError } from '../api/errors.js';

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
  }
}

/**
 * `Authorization: Bearer <operator credential>`. Only the operators table is consulted, so a
 * driver token (also Bearer) or a fleet API key is simply not a credential here: 401.
 */
export function authenticate(operators: OperatorCredentials) {
  return async (request: FastifyRequest): Promise<void> => {
    const secret = credential(request, 'Bearer');
    const operator = secret === null ? undefined : operators.check(secret);
    if (!operator) {
      throw new ApiError(
        401,
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
    if (!operator) throw new ApiError(401, 'invalid_operator_credential', 'not authenticated');
    if (!roleAllows(operator.role, role)) {
      throw new ApiError(403, 'forbidden', `the ${operator.role} role cannot do this`);
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
export function operatorAction(action: string) {
  return { preHandler: requireRole('operator'), config: { audit: action } };
}
