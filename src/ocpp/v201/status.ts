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
