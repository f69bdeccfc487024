import type { AuthorizationStatus201 } from './authorization-status.js';
import type { MeterValue201 } from './meter-values.js';
import type { MessageContent } from './screen.js';

/**
 * The parts of OCPP 2.0.1 messages the gateway reads or sends. ocpp-rpc's strict mode has already
 * checked every incoming frame against the official 2.0.1 JSON schemas, so these shapes hold.
 */
export interface BootNotificationReq {
  reason: string;
  chargingStation: {
    model: string;
    vendorName: string;
    serialNumber?: string;
    firmwareVersion?: string;
  };
}

export interface StatusNotificationReq {
  timestamp: string;
  connectorStatus: 'Available' | 'Occupied' | 'Reserved' | 'Unavailable' | 'Faulted';
  evseId: number;
  connectorId: number;
}

export interface IdToken {
  idToken: string;
  type: string;
}

export interface AuthorizeReq {
  idToken: IdToken;
}

export type TransactionEventType = 'Started' | 'Updated' | 'Ended';

export interface TransactionEventReq {
  eventType: TransactionEventType;
  timestamp: string;
  triggerReason: string;
  seqNo: number;
  offline?: boolean;
  transactionInfo: {
    transactionId: string;
    chargingState?: 'Charging' | 'EVConnected' | 'SuspendedEV' | 'SuspendedEVSE' | 'Idle';
    stoppedReason?: string;
    remoteStartId?: number;
  };
  idToken?: IdToken;
  evse?: { id: number; connectorId?: number };
  meterValue?: MeterValue201[];
}

export interface TransactionEventConf {
  idTokenInfo?: { status: AuthorizationStatus201; personalMessage?: MessageContent };
  totalCost?: number;
  updatedPersonalMessage?: MessageContent;
}

export interface MeterValuesReq {
  evseId: number;
  meterValue: MeterValue201[];
}

export interface NotifyEVChargingNeedsReq {
  evseId: number;
  chargingNeeds: {
    requestedEnergyTransfer: string;
    dcChargingParameters?: {
      stateOfCharge?: number;
      evEnergyCapacity?: number;
      energyAmount?: number;
    };
    acChargingParameters?: { energyAmount: number };
  };
}

export interface RequestStartStopConf {
  status: 'Accepted' | 'Rejected';
  transactionId?: string;
}

export interface SetVariablesConf {
  setVariableResult: {
    attributeStatus: string;
    component: { name: string };
    variable: { name: string };
  }[];
}

export interface DataTransferReq {
  vendorId: string;
  messageId?: string;
}
