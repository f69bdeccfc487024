import { ocppConnectorId } from '../../ocpp-connector.js';
import type { StepOutcome } from '../../port.js';
import { stepOutcome } from '../../step-outcome.js';
import type { Session201 } from '../session-context.js';

/** Scheduled (the station applies it when the transaction ends) counts as accepted. */
export function changeAvailability(
  { ctx }: Session201,
  connectorId: string,
  operative: boolean,
): Promise<StepOutcome> {
  return stepOutcome(
    ctx.rpc,
    'ChangeAvailability',
    {
      operationalStatus: operative ? 'Operative' : 'Inoperative',
      evse: { id: ocppConnectorId(ctx, connectorId) },
    },
    ctx.callTimeoutMs,
    ['Accepted', 'Scheduled'],
  );
}
