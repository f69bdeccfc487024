import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply } from '../../port.js';

/** RemoteStopTransaction with the charger's own reply (Accepted or Rejected). */
export function remoteStopTransaction(
  target: CallTarget,
  transactionRef: string,
): Promise<ChargerReply> {
  return callForReply(target, 'RemoteStopTransaction', { transactionId: Number(transactionRef) });
}
