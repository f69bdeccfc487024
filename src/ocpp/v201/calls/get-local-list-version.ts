import { callForReply, type CallTarget } from '../../calls/operator-call.js';

/** GetLocalListVersion (D03): the station's list version, 0 for none; a CALLERROR: null. */
export async function getLocalListVersion(target: CallTarget): Promise<number | null> {
  const reply = await callForReply(target, 'GetLocalListVersion', {});
  if (reply.status === 'CallError') return null;
  const version = (reply.raw as { versionNumber?: unknown }).versionNumber;
  return Number.isSafeInteger(version) && (version as number) >= 0 ? (version as number) : null;
}
