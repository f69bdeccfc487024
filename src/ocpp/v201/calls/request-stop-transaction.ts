import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply } from '../../port.js';

/** RequestStopTransaction with the station's own reply (Accepted or Rejected). */
export function requestStopTransaction(
  target: CallTarget,
  transactionRef: string,
): Promise<ChargerReply> {
  return callForReply(target, 'RequestStopTransaction', { transactionId: transactionRef });
}
