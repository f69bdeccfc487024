import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply, TriggerKind } from '../../port.js';

const MESSAGE: Record<TriggerKind, string> = {
  status: 'StatusNotification',
  meter: 'MeterValues',
};

/** TriggerMessage; the charger answers Accepted, Rejected or NotImplemented. */
export function triggerMessage(
  target: CallTarget,
  connectorId: number | null,
  kind: TriggerKind,
): Promise<ChargerReply> {
  return callForReply(target, 'TriggerMessage', {
    requestedMessage: MESSAGE[kind],
    ...(connectorId === null ? {} : { connectorId }),
  });
}
