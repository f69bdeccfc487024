import { ocppConnectorId } from '../../ocpp-connector.js';
import type { StepOutcome } from '../../port.js';
import { stepOutcome } from '../../step-outcome.js';
import type { Session16 } from '../session-context.js';

/** 1.6 chargers end the connector's transaction before they unlock it (Unlocked). */
export function unlockConnector({ ctx }: Session16, connectorId: string): Promise<StepOutcome> {
  return stepOutcome(
    ctx.rpc,
    'UnlockConnector',
    { connectorId: ocppConnectorId(ctx, connectorId) },
    ctx.callTimeoutMs,
    ['Unlocked'],
  );
}
