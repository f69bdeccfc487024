import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { LogReply, LogRequest } from '../../port.js';

/**
 * GetDiagnostics: a reply without a fileName means the charger has nothing to upload (1.6 has no
 * status word for it), so it counts as refused.
 */
export async function getDiagnostics(target: CallTarget, request: LogRequest): Promise<LogReply> {
  const reply = await callForReply(target, 'GetDiagnostics', {
    location: request.location,
    retries: request.retries,
    retryInterval: request.retryIntervalSeconds,
  });
  if (reply.status === 'CallError') return { ...reply, fileName: null };
  const fileName = (reply.raw as { fileName?: string }).fileName ?? null;
  return { ...reply, status: fileName === null ? 'NoFile' : 'Accepted', fileName };
}
