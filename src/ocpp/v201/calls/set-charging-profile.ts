import {
  CEILING_STACK_LEVEL,
  ceilingProfileId,
  ocppConnectorId,
  ZERO_POWER_STACK_LEVEL,
  zeroPowerProfileId,
} from '../../calls/ocpp-connector.js';
import type { StepOutcome } from '../../port.js';
import { callForReply } from '../../calls/operator-call.js';
import type { Ceiling } from '../../calls/power-limit.js';
import { stepOf } from '../../calls/step-outcome.js';
import type { ConnectionContext201 } from '../connection-context.js';

/** A TxProfile on the transaction that allows 0 W: the station stops supplying, the tx stays open. */
export async function setZeroChargingProfile(
  { ctx }: ConnectionContext201,
  connectorId: string,
  transactionRef: string,
): Promise<StepOutcome> {
  const evseId = ocppConnectorId(ctx, connectorId);
  const reply = await callForReply({ ctx }, 'SetChargingProfile', {
    evseId,
    chargingProfile: {
      id: zeroPowerProfileId(evseId),
      stackLevel: ZERO_POWER_STACK_LEVEL,
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

/**
 * The load manager's ceiling on the EVSE: a TxProfile on the running transaction, or a
 * TxDefaultProfile that holds every transaction started there until replaced or cleared.
 */
export async function setCeilingProfile(
  { ctx }: ConnectionContext201,
  connectorId: string,
  transactionRef: string | undefined,
  { unit, period }: Ceiling,
): Promise<StepOutcome> {
  const evseId = ocppConnectorId(ctx, connectorId);
  const onTransaction = transactionRef !== undefined;
  const id = ceilingProfileId(evseId, onTransaction);
  const reply = await callForReply({ ctx }, 'SetChargingProfile', {
    evseId,
    chargingProfile: {
      id,
      stackLevel: CEILING_STACK_LEVEL,
      chargingProfilePurpose: onTransaction ? 'TxProfile' : 'TxDefaultProfile',
      chargingProfileKind: 'Relative',
      ...(onTransaction ? { transactionId: transactionRef } : {}),
      chargingSchedule: [{ id, chargingRateUnit: unit, chargingSchedulePeriod: [period] }],
    },
  });
  return stepOf(reply);
}
