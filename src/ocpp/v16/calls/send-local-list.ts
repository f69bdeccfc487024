import { ENTRY_STATUS, listOutcome, updateFrame } from '../../calls/local-list-update.js';
import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { LocalListOutcome, LocalListUpdate } from '../../port.js';

/** SendLocalList (Local Auth List Management): Accepted, Failed, NotSupported or VersionMismatch. */
export async function sendLocalList(
  target: CallTarget,
  update: LocalListUpdate,
): Promise<LocalListOutcome> {
  const { updateType, list } = updateFrame(
    update,
    (token) => ({ idTag: token.value }),
    (entry) => ({
      idTag: entry.value,
      idTagInfo: {
        status: ENTRY_STATUS[entry.status],
        ...(entry.expiresAt === null ? {} : { expiryDate: entry.expiresAt }),
      },
    }),
  );
  const reply = await callForReply(target, 'SendLocalList', {
    listVersion: update.version,
    updateType,
    ...(list.length === 0 ? {} : { localAuthorizationList: list }),
  });
  return listOutcome(reply.status);
}
