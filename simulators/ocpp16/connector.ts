import { MeteredOutlet } from '../shared/metered-outlet.js';
import type { AvailabilityType, ChargePointErrorCode, ChargePointStatus } from './ocpp-types.js';

export type { VehicleSpec } from '../shared/metered-outlet.js';
export { validateVehicle } from '../shared/metered-outlet.js';

export interface Transaction {
  id: number;
  idTag: string;
  meterStart: number;
}

export interface PendingRemoteStart {
  idTag: string;
  /** Authorized at the charger's reader (a tap, AutoCharge), not by a remote start. */
  byTap?: boolean;
}

/**
 * One 1.6 connector: the physical outlet plus its status and running transaction. Energy flows
 * only while a transaction is Charging.
 */
export class Connector extends MeteredOutlet {
  status: ChargePointStatus = 'Available';
  errorCode: ChargePointErrorCode = 'NoError';
  availability: AvailabilityType = 'Operative';
  /** ChangeAvailability received while a transaction ran; applied when it ends. */
  scheduledAvailability?: AvailabilityType;
  transaction?: Transaction;
  pendingRemoteStart?: PendingRemoteStart;
  /** A StartTransaction is in flight; blocks a second start. */
  starting = false;

  protected get inTransaction(): boolean {
    return this.transaction !== undefined;
  }

  protected get chargingAllowed(): boolean {
    return this.transaction !== undefined && this.status === 'Charging';
  }

  setStatus(status: ChargePointStatus, errorCode: ChargePointErrorCode): void {
    this.accrue();
    this.status = status;
    this.errorCode = errorCode;
  }

  beginTransaction(transaction: Transaction): void {
    this.accrue();
    this.transaction = transaction;
  }

  /** Pass the instant of the final reading so no energy slips in between. */
  endTransaction(nowMs = performance.now()): Transaction | undefined {
    this.accrue(nowMs);
    const transaction = this.transaction;
    this.transaction = undefined;
    return transaction;
  }
}
