import type { ConnectorStatus, TransferStatus } from '../port.js';

/** What a charger says about itself at boot, in either protocol. */
export interface BootInfo {
  vendor: string;
  model: string;
  serialNumber: string | null;
  firmwareVersion: string | null;
}

/** What the plugged-in vehicle told the charger (ISO 15118, CHAdeMO, or a SoC measurand). */
export interface VehicleInfo {
  socPercent?: number;
  batteryWh?: number;
}

/** A payment a station's own terminal settled (OCPP 2.1 NotifySettlement); never billed here. */
export interface StationPayment {
  pspRef: string;
  status: string;
  amount: number;
  at: string;
  transactionId: string | null;
}

/**
 * What an adapter reports about its charger that is not about a session: boot, connector status,
 * the vehicle on a connector, and anything odd for the operator. The central system keeps these;
 * session matters go to the ChargerEvents instead. `connectorId` is the site's connector id, or
 * WHOLE_CHARGER for the charger itself.
 */
export interface ChargerReports {
  booted(info: BootInfo): void;
  /**
   * `transactionless`: the status itself says no transaction runs on the connector (1.6
   * Preparing), where the version-neutral status cannot (2.0.1 Occupied may have one).
   */
  status(
    connectorId: string,
    status: ConnectorStatus,
    errorCode: string | null,
    transactionless?: boolean,
  ): void;
  /** The connector's last known status. */
  statusOf(connectorId: string): ConnectorStatus;
  vehicle(connectorId: string, info: VehicleInfo, at: string): void;
  noted(action: string, note: string, payload?: unknown): void;
  /** A departure from the schema the edge accepted (counted per charger and kind). */
  deviation(kind: string, example: unknown): void;
  /** A firmware or log job's progress (Firmware/Diagnostics/LogStatusNotification). */
  transfer(status: TransferStatus): void;
  /** The measurands the charger says it will send during a transaction (read back). */
  metering(measurands: string[]): void;
  /** A payment the station's own terminal settled: for the operator to reconcile. */
  stationPayment(payment: StationPayment): void;
}
