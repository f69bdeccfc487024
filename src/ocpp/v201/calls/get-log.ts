import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { LogReply, LogRequest } from '../../port.js';

/** GetLog of the DiagnosticsLog: Accepted, Rejected or AcceptedCanceled, with the file's name. */
export async function getLog(target: CallTarget, request: LogRequest): Promise<LogReply> {
  const reply = await callForReply(target, 'GetLog', {
    logType: 'DiagnosticsLog',
    requestId: request.requestId,
    retries: request.retries,
    retryInterval: request.retryIntervalSeconds,
    log: { remoteLocation: request.location },
  });
  const fileName = (reply.raw as { filename?: string } | null)?.filename ?? null;
  return { ...reply, fileName };
}
