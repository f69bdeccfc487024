import { ocppConnectorId } from '../../ocpp-connector.js';
import type { StepOutcome } from '../../port.js';
import { stepOutcome } from '../../step-outcome.js';
import type { Session16 } from '../session-context.js';

/** Scheduled (the charger applies it when the transaction ends) counts as accepted. */
export function changeAvailability(
  { ctx }: Session16,
  connectorId: string,
  operative: boolean,
): Promise<StepOutcome> {
  return stepOutcome(
    ctx.rpc,
    'ChangeAvailability',
    {
      connectorId: ocppConnectorId(ctx, connectorId),
      type: operative ? 'Operative' : 'Inoperative',
    },
    ctx.callTimeoutMs,
    ['Accepted', 'Scheduled'],
  );
}
