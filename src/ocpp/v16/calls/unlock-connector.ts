import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply } from '../../port.js';

/** UnlockConnector: the charger answers Unlocked, UnlockFailed or NotSupported. */
export function unlockConnector(target: CallTarget, connectorId: number): Promise<ChargerReply> {
  return callForReply(target, 'UnlockConnector', { connectorId });
}
