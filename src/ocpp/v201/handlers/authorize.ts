import type { AuthorizeReq } from '../messages.js';
import type { ConnectionContext201 } from '../connection-context.js';
import { authorizationStatus } from '../authorization-status.js';

export function authorize({ ctx }: ConnectionContext201, req: AuthorizeReq) {
  const verdict = ctx.events().authorize(ctx.chargerId, req.idToken.idToken, null);
  return { idTokenInfo: { status: authorizationStatus(verdict) } };
}
