// The shared event payloads with the 1.6 types filled in (integer transaction ids, 1.6 status
// and reason enums), under the names the 1.6 simulator has always exported.
import type * as Shared from '../shared/events.js';
import type {
  ChargePointErrorCode,
  ChargePointStatus,
  ResetType,
  StopReason,
} from './ocpp-types.js';

export type {
  ConfigurationChangedEvent,
  ConnectedEvent,
  ConnectorEvent,
  DisconnectedEvent,
  FrameEvent,
  PluggedEvent,
  RemoteStartEvent,
  WarningEvent,
} from '../shared/events.js';

export interface Ocpp16Protocol {
  transactionId: number;
  status: ChargePointStatus;
  errorCode: ChargePointErrorCode;
  stopReason: StopReason;
  resetType: ResetType;
}

export type StatusEvent = Shared.StatusEvent<Ocpp16Protocol>;
export type TransactionStartedEvent = Shared.TransactionStartedEvent<Ocpp16Protocol>;
export type TransactionStoppedEvent = Shared.TransactionStoppedEvent<Ocpp16Protocol>;
export type RemoteStopEvent = Shared.RemoteStopEvent<Ocpp16Protocol>;
export type MeterValuesEvent = Shared.MeterValuesEvent<Ocpp16Protocol>;
export type ChargePointEvents = Shared.ChargePointEvents<Ocpp16Protocol>;
export type ChargePointEventName = Shared.ChargePointEventName;
export type ChargePointEventPayload<K extends ChargePointEventName> =
  Shared.ChargePointEventPayload<K, Ocpp16Protocol>;
