import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply } from '../../port.js';

/**
 * UnlockConnector of the EVSE's cable (the gateway treats an EVSE as one connector, number 1):
 * Unlocked, UnlockFailed, OngoingAuthorizedTransaction or UnknownConnector.
 */
export function unlockConnector(target: CallTarget, evseId: number): Promise<ChargerReply> {
  return callForReply(target, 'UnlockConnector', { evseId, connectorId: 1 });
}
