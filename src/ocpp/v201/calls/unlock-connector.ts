import { ocppConnectorId } from '../../ocpp-connector.js';
import type { StepOutcome } from '../../port.js';
import { stepOutcome } from '../../step-outcome.js';
import type { Session201 } from '../session-context.js';

/** The EVSE's first connector: the gateway addresses EVSEs as charging points (adapter.ts). */
export function unlockConnector({ ctx }: Session201, connectorId: string): Promise<StepOutcome> {
  return stepOutcome(
    ctx.rpc,
    'UnlockConnector',
    { evseId: ocppConnectorId(ctx, connectorId), connectorId: 1 },
    ctx.callTimeoutMs,
    ['Unlocked'],
  );
}
