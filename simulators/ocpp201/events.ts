// The shared event payloads with the 2.0.1 types filled in: UUID transaction ids, the 2.0.1
// connector statuses (connectorId is the EVSE id) and the stop reasons this station reports.
import type * as Shared from '../shared/events.js';
import type { CommonStopReason, FaultCode } from '../shared/events.js';
import type { ConnectorStatus, ResetType } from './ocpp-types.js';

/** ReasonEnumType values the simulator sends: the shared ones and three of its own. */
export type StationStopReason =
  CommonStopReason | 'ImmediateReset' | 'Timeout' | 'EnergyLimitReached';

/** The subprotocols this station speaks: 2.0.1, and 2.1 (a superset of its message model). */
export type Ocpp201Family = 'ocpp2.0.1' | 'ocpp2.1';

export interface Ocpp201Protocol {
  transactionId: string;
  status: ConnectorStatus;
  errorCode: FaultCode;
  stopReason: StationStopReason;
  resetType: ResetType;
}

export type StatusEvent = Shared.StatusEvent<Ocpp201Protocol>;
export type TransactionStartedEvent = Shared.TransactionStartedEvent<Ocpp201Protocol>;
export type TransactionStoppedEvent = Shared.TransactionStoppedEvent<Ocpp201Protocol>;
export type RemoteStopEvent = Shared.RemoteStopEvent<Ocpp201Protocol>;
export type MeterValuesEvent = Shared.MeterValuesEvent<Ocpp201Protocol>;
export type ChargePointEvents = Shared.ChargePointEvents<Ocpp201Protocol>;
export type ChargePointEventName = Shared.ChargePointEventName;
export type ChargePointEventPayload<K extends ChargePointEventName> =
  Shared.ChargePointEventPayload<K, Ocpp201Protocol>;
