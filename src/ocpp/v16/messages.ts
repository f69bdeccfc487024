import type { MeterValue16 } from './meter-values.js';

/**
 * The parts of OCPP 1.6J requests the gateway reads. ocpp-rpc's strict mode has already checked
 * every incoming frame against the official 1.6 JSON schemas, so these shapes hold.
 */
export interface BootNotificationReq {
  chargePointVendor: string;
  chargePointModel: string;
  chargePointSerialNumber?: string;
  chargeBoxSerialNumber?: string;
  firmwareVersion?: string;
}

export interface StatusNotificationReq {
  connectorId: number;
  errorCode: string;
  status: string;
  timestamp?: string;
  info?: string;
  vendorErrorCode?: string;
}

export interface AuthorizeReq {
  idTag: string;
}

export interface StartTransactionReq {
  connectorId: number;
  idTag: string;
  meterStart: number;
  timestamp: string;
  reservationId?: number;
}

export interface MeterValuesReq {
  connectorId: number;
  transactionId?: number;
  meterValue: MeterValue16[];
}

export interface StopTransactionReq {
  transactionId: number;
  meterStop: number;
  timestamp: string;
  idTag?: string;
  reason?: string;
  transactionData?: MeterValue16[];
}

export interface DataTransferReq {
  vendorId: string;
  messageId?: string;
  data?: string;
}

export interface StatusConf {
  status: string;
}
