import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { LocalListEntry, LocalListOutcome, LocalListUpdate } from '../../port.js';

const STATUS: Record<LocalListEntry['status'], string> = {
  accepted: 'Accepted',
  blocked: 'Blocked',
};

/** 2.0.1 AuthorizationData; in a differential update an entry without idTokenInfo removes it. */
function authorizationData(entry: LocalListEntry) {
  return {
    idToken: { idToken: entry.value, type: entry.type },
    idTokenInfo: {
      status: STATUS[entry.status],
      ...(entry.expiresAt === null ? {} : { cacheExpiryDateTime: entry.expiresAt }),
    },
  };
}

const OUTCOMES: Record<string, LocalListOutcome> = {
  Accepted: 'accepted',
  VersionMismatch: 'version_mismatch',
  CallError: 'not_supported',
};

/** SendLocalList (D01, D02): Accepted, Failed or VersionMismatch. */
export async function sendLocalList(
  target: CallTarget,
  update: LocalListUpdate,
): Promise<LocalListOutcome> {
  const list = [
    ...update.remove.map((r) => ({ idToken: { idToken: r.value, type: r.type } })),
    ...update.put.map(authorizationData),
  ];
  const reply = await callForReply(target, 'SendLocalList', {
    versionNumber: update.version,
    updateType: update.kind === 'full' ? 'Full' : 'Differential',
    // The schema wants at least one entry when the list is there: an empty full list omits it.
    ...(list.length === 0 ? {} : { localAuthorizationList: list }),
  });
  return OUTCOMES[reply.status] ?? 'failed';
}
