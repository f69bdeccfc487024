import { callForReply, type CallTarget } from '../../calls/operator-call.js';

/**
 * GetLocalListVersion: the charger's list version, 0 for an empty list; -1 (or a CALLERROR, or a
 * value that is no integer) means it has no local list: null.
 */
export async function getLocalListVersion(target: CallTarget): Promise<number | null> {
  const reply = await callForReply(target, 'GetLocalListVersion', {});
  if (reply.status === 'CallError') return null;
  const version = (reply.raw as { listVersion?: unknown }).listVersion;
  return Number.isSafeInteger(version) && (version as number) >= 0 ? (version as number) : null;
}
