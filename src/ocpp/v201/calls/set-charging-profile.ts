import { ocppConnectorId, zeroPowerProfileId } from '../../ocpp-connector.js';
import type { StepOutcome } from '../../port.js';
import { callForReply } from '../../operator-call.js';
import { stepOf } from '../../step-outcome.js';
import type { Session201 } from '../session-context.js';

/** A TxProfile on the transaction that allows 0 W: the station stops supplying, the tx stays open. */
export async function setZeroChargingProfile(
  { ctx }: Session201,
  connectorId: string,
  transactionRef: string,
): Promise<StepOutcome> {
  const evseId = ocppConnectorId(ctx, connectorId);
  const reply = await callForReply({ ctx }, 'SetChargingProfile', {
    evseId,
    chargingProfile: {
      id: zeroPowerProfileId(evseId),
      stackLevel: 0,
      chargingProfilePurpose: 'TxProfile',
      chargingProfileKind: 'Relative',
      transactionId: transactionRef,
      chargingSchedule: [
        {
          id: zeroPowerProfileId(evseId),
          chargingRateUnit: 'W',
          chargingSchedulePeriod: [{ startPeriod: 0, limit: 0 }],
        },
      ],
    },
  });
  return stepOf(reply);
}
