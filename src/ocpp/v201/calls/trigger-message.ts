import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply, TriggerKind } from '../../port.js';

type Requested = 'StatusNotification' | 'MeterValues' | 'TransactionEvent';

const MESSAGE: Record<TriggerKind, Requested> = {
  status: 'StatusNotification',
  meter: 'MeterValues',
};

/** TriggerMessage; the station answers Accepted, Rejected or NotImplemented. */
export function triggerMessage(
  target: CallTarget,
  evseId: number | null,
  requested: TriggerKind | Requested,
): Promise<ChargerReply> {
  const requestedMessage = requested in MESSAGE ? MESSAGE[requested as TriggerKind] : requested;
  // A StatusNotification is per connector: the gateway addresses an EVSE by its first (adapter.ts).
  const evse =
    evseId === null
      ? {}
      : {
          evse:
            requestedMessage === 'StatusNotification'
              ? { id: evseId, connectorId: 1 }
              : { id: evseId },
        };
  return callForReply(target, 'TriggerMessage', { requestedMessage, ...evse });
}
