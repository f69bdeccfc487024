import type { ConnectorStatus } from '../port.js';
import type { StatusNotificationReq, TransactionEventReq } from './messages.js';

/** OCPP 2.0.1 ConnectorStatusEnumType to the port's version-neutral status. */
export function statusFrom201(status: StatusNotificationReq['connectorStatus']): ConnectorStatus {
  switch (status) {
    case 'Available':
      return 'available';
    case 'Occupied':
      return 'occupied';
    case 'Reserved':
      return 'reserved';
    case 'Unavailable':
      return 'unavailable';
    case 'Faulted':
      return 'faulted';
  }
}

type ChargingState = NonNullable<TransactionEventReq['transactionInfo']['chargingState']>;

/**
 * 2.0.1 says "Occupied" for a plugged-in EV whether or not energy flows; what flows is in the
 * transaction's chargingState, which refines the status the way 1.6's Charging/Suspended* did.
 */
export function statusFromChargingState(state: ChargingState): ConnectorStatus | null {
  switch (state) {
    case 'Charging':
      return 'charging';
    case 'SuspendedEV':
    case 'SuspendedEVSE':
      return 'suspended';
    case 'EVConnected':
      return 'occupied';
    case 'Idle':
      return null;
  }
}

/**
 * The EVSE once its transaction has ended. A station whose EV stays plugged keeps reporting
 * Occupied and sends no new StatusNotification, so the end itself says it: Occupied with no
 * transaction (free for a new start), unless the event says the cable is gone (Idle: its
 * StatusNotification Available follows).
 */
export function statusAfterEnd(state: ChargingState | undefined): ConnectorStatus | null {
  return state === 'Idle' ? null : 'occupied';
}

/**
 * A StatusNotification Occupied (a station answering a TriggerMessage mid-charge says it) tells
 * less than the open transaction's chargingState did: a charging or suspended EVSE stays so until
 * the transaction itself says otherwise. Any other status (Faulted, Unavailable) is taken.
 */
export function statusWithTransaction(
  reported: ConnectorStatus,
  current: ConnectorStatus,
): ConnectorStatus {
  return reported === 'occupied' && (current === 'charging' || current === 'suspended')
    ? current
    : reported;
}
