import type { ConnectorStatus } from '../port.js';

/** OCPP 1.6 ChargePointStatus to the port's version-neutral status. */
export function statusFrom16(status: string): ConnectorStatus {
  switch (status) {
    case 'Available':
      return 'available';
    case 'Preparing':
      return 'occupied';
    case 'Charging':
      return 'charging';
    case 'SuspendedEV':
    case 'SuspendedEVSE':
      return 'suspended';
    case 'Finishing':
      return 'finishing';
    case 'Reserved':
      return 'reserved';
    case 'Unavailable':
      return 'unavailable';
    case 'Faulted':
      return 'faulted';
    default:
      return 'unknown';
  }
}
