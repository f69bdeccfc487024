import { ceilingProfileId, ocppConnectorId } from '../../calls/ocpp-connector.js';
import type { StepOutcome } from '../../port.js';
import { callForReply } from '../../calls/operator-call.js';
import { stepOf } from '../../calls/step-outcome.js';
import type { ConnectionContext201 } from '../connection-context.js';

/**
 * Clears the load manager's ceiling by its id alone, so the zero profile and any operator's
 * profiles stay. Unknown (nothing by that id) leaves no ceiling either: it counts as accepted.
 */
export async function clearCeilingProfile(
  { ctx }: ConnectionContext201,
  connectorId: string,
  onTransaction: boolean,
): Promise<StepOutcome> {
  const evseId = ocppConnectorId(ctx, connectorId);
  const reply = await callForReply({ ctx }, 'ClearChargingProfile', {
    chargingProfileId: ceilingProfileId(evseId, onTransaction),
  });
  return stepOf(reply, ['Accepted', 'Unknown']);
}
