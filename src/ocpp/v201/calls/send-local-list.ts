import { ENTRY_STATUS, listOutcome, updateFrame } from '../../calls/local-list-update.js';
import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { LocalListOutcome, LocalListUpdate } from '../../port.js';

/** SendLocalList (D01, D02): Accepted, Failed or VersionMismatch. */
export async function sendLocalList(
  target: CallTarget,
  update: LocalListUpdate,
): Promise<LocalListOutcome> {
  const { updateType, list } = updateFrame(
    update,
    (token) => ({ idToken: { idToken: token.value, type: token.type } }),
    (entry) => ({
      idToken: { idToken: entry.value, type: entry.type },
      idTokenInfo: {
        status: ENTRY_STATUS[entry.status],
        ...(entry.expiresAt === null ? {} : { cacheExpiryDateTime: entry.expiresAt }),
      },
    }),
  );
  const reply = await callForReply(target, 'SendLocalList', {
    versionNumber: update.version,
    updateType,
    // The schema wants at least one entry when the list is there: an empty full list omits it.
    ...(list.length === 0 ? {} : { localAuthorizationList: list }),
  });
  return listOutcome(reply.status);
}
