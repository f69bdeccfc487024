import type { AuthorizeReq } from '../messages.js';
import type { ConnectionContext201 } from '../connection-context.js';
import { authorizationStatus } from '../authorization-status.js';

export function authorize({ ctx, screen }: ConnectionContext201, req: AuthorizeReq) {
  const verdict = ctx.events().authorize(ctx.chargerId, req.idToken.idToken, null);
  const personalMessage = verdict.accepted ? screen.personalMessage(verdict.message) : undefined;
  return {
    idTokenInfo: {
      status: authorizationStatus(verdict),
      ...(personalMessage && { personalMessage }),
    },
  };
}
