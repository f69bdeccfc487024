import { ocppConnectorId, zeroPowerProfileId } from '../../ocpp-connector.js';
import type { StepOutcome } from '../../port.js';
import { callForReply } from '../../operator-call.js';
import { stepOf } from '../../step-outcome.js';
import type { Session16 } from '../session-context.js';

/** A TxProfile on the transaction that allows 0 A: the charger stops drawing, the tx stays open. */
export async function setZeroChargingProfile(
  { ctx }: Session16,
  connectorId: string,
  transactionRef: string,
): Promise<StepOutcome> {
  const ocppId = ocppConnectorId(ctx, connectorId);
  const reply = await callForReply({ ctx }, 'SetChargingProfile', {
    connectorId: ocppId,
    csChargingProfiles: {
      chargingProfileId: zeroPowerProfileId(ocppId),
      transactionId: Number(transactionRef),
      stackLevel: 0,
      chargingProfilePurpose: 'TxProfile',
      chargingProfileKind: 'Relative',
      chargingSchedule: {
        chargingRateUnit: 'A',
        chargingSchedulePeriod: [{ startPeriod: 0, limit: 0 }],
      },
    },
  });
  return stepOf(reply);
}
