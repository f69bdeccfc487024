import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { LocalListEntry, LocalListOutcome, LocalListUpdate } from '../../port.js';

const STATUS: Record<LocalListEntry['status'], string> = {
  accepted: 'Accepted',
  blocked: 'Blocked',
};

/** 1.6 idTagInfo of a list entry; a differential entry without it removes the idTag. */
function authorizationData(entry: LocalListEntry) {
  return {
    idTag: entry.value,
    idTagInfo: {
      status: STATUS[entry.status],
      ...(entry.expiresAt === null ? {} : { expiryDate: entry.expiresAt }),
    },
  };
}

const OUTCOMES: Record<string, LocalListOutcome> = {
  Accepted: 'accepted',
  VersionMismatch: 'version_mismatch',
  NotSupported: 'not_supported',
  CallError: 'not_supported',
};

/** SendLocalList (Local Auth List Management profile): Accepted, Failed, NotSupported or VersionMismatch. */
export async function sendLocalList(
  target: CallTarget,
  update: LocalListUpdate,
): Promise<LocalListOutcome> {
  const list = [
    ...update.remove.map((r) => ({ idTag: r.value })),
    ...update.put.map(authorizationData),
  ];
  const reply = await callForReply(target, 'SendLocalList', {
    listVersion: update.version,
    updateType: update.kind === 'full' ? 'Full' : 'Differential',
    ...(list.length === 0 ? {} : { localAuthorizationList: list }),
  });
  return OUTCOMES[reply.status] ?? 'failed';
}
