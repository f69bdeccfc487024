import type { AuthorizeReq } from '../messages.js';
import type { Session16 } from '../connection-context.js';

export function authorize({ ctx }: Session16, req: AuthorizeReq) {
  const verdict = ctx.events().authorize(ctx.chargerId, req.idTag, null);
  return { idTagInfo: { status: verdict.accepted ? 'Accepted' : 'Invalid' } };
}
