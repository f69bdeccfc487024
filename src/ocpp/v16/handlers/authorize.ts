import type { AuthorizeReq } from '../messages.js';
import type { ConnectionContext16 } from '../connection-context.js';
import { idTagStatus } from '../id-tag-status.js';

export function authorize({ ctx, screen }: ConnectionContext16, req: AuthorizeReq) {
  const verdict = ctx.events().authorize(ctx.chargerId, req.idTag, null);
  if (verdict.accepted) screen.tokenAccepted(req.idTag, verdict.message);
  return { idTagInfo: { status: idTagStatus(verdict) } };
}
