import { ocppConnectorId } from '../../ocpp-connector.js';
import type { StepOutcome } from '../../port.js';
import { stepOutcome } from '../../step-outcome.js';
import type { Session201 } from '../session-context.js';

/** Asks the station to send a TransactionEvent, MeterValues or StatusNotification for the EVSE. */
export function triggerMessage(
  { ctx }: Session201,
  requestedMessage: 'TransactionEvent' | 'MeterValues' | 'StatusNotification',
  connectorId: string,
): Promise<StepOutcome> {
  const evse = { id: ocppConnectorId(ctx, connectorId) };
  return stepOutcome(
    ctx.rpc,
    'TriggerMessage',
    // StatusNotification names a connector; the gateway's EVSEs are addressed by their first.
    {
      requestedMessage,
      evse: requestedMessage === 'StatusNotification' ? { ...evse, connectorId: 1 } : evse,
    },
    ctx.callTimeoutMs,
  );
}
