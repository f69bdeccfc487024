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
import type { ConnectionContext16 } from '../connection-context.js';

/** A TxProfile on the transaction that allows 0 A: the charger stops drawing, the tx stays open. */
export async function setZeroChargingProfile(
  { ctx }: ConnectionContext16,
  connectorId: string,
  transactionRef: string,
): Promise<StepOutcome> {
  const ocppId = ocppConnectorId(ctx, connectorId);
  const reply = await callForReply({ ctx }, 'SetChargingProfile', {
    connectorId: ocppId,
    csChargingProfiles: {
      chargingProfileId: zeroPowerProfileId(ocppId),
      transactionId: Number(transactionRef),
      stackLevel: ZERO_POWER_STACK_LEVEL,
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

/**
 * The load manager's ceiling: a TxProfile on the running transaction, or a TxDefaultProfile on
 * the connector (it holds every transaction started there until replaced or cleared).
 */
export async function setCeilingProfile(
  { ctx }: ConnectionContext16,
  connectorId: string,
  transactionRef: string | undefined,
  { unit, period }: Ceiling,
): Promise<StepOutcome> {
  const ocppId = ocppConnectorId(ctx, connectorId);
  const onTransaction = transactionRef !== undefined;
  const reply = await callForReply({ ctx }, 'SetChargingProfile', {
    connectorId: ocppId,
    csChargingProfiles: {
      chargingProfileId: ceilingProfileId(ocppId, onTransaction),
      ...(onTransaction ? { transactionId: Number(transactionRef) } : {}),
      stackLevel: CEILING_STACK_LEVEL,
      chargingProfilePurpose: onTransaction ? 'TxProfile' : 'TxDefaultProfile',
      chargingProfileKind: 'Relative',
      chargingSchedule: { chargingRateUnit: unit, chargingSchedulePeriod: [period] },
    },
  });
  return stepOf(reply);
}
