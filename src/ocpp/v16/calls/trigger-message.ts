import { ocppConnectorId } from '../../ocpp-connector.js';
import type { StepOutcome } from '../../port.js';
import { stepOutcome } from '../../step-outcome.js';
import type { Session16 } from '../session-context.js';

/** Asks the charger to send a StatusNotification or MeterValues for the connector now. */
export function triggerMessage(
  { ctx }: Session16,
  requestedMessage: 'StatusNotification' | 'MeterValues',
  connectorId: string,
): Promise<StepOutcome> {
  return stepOutcome(
    ctx.rpc,
    'TriggerMessage',
    { requestedMessage, connectorId: ocppConnectorId(ctx, connectorId) },
    ctx.callTimeoutMs,
  );
}
