import type { VehicleSpec } from './connector.js';
import type { ChargePointErrorCode, ChargePointStatus, StopReason } from './ocpp-types.js';

export interface ConnectedEvent {
  identity: string;
  heartbeatIntervalSeconds: number;
}

export interface DisconnectedEvent {
  code?: number;
  reason?: string;
}

export interface StatusEvent {
  connectorId: number;
  status: ChargePointStatus;
  errorCode: ChargePointErrorCode;
}

export interface PluggedEvent {
  connectorId: number;
  vehicle: VehicleSpec;
}

export interface ConnectorEvent {
  connectorId: number;
}

export interface TransactionStartedEvent {
  connectorId: number;
  transactionId: number;
  idTag: string;
  meterStart: number;
}

export interface TransactionStoppedEvent {
  connectorId: number;
  transactionId: number;
  meterStop: number;
  reason: StopReason;
}

export interface RemoteStartEvent {
  connectorId: number | undefined;
  idTag: string;
  status: 'Accepted' | 'Rejected' | 'Ignored';
}

export interface RemoteStopEvent {
  transactionId: number;
  status: 'Accepted' | 'Rejected';
}

/** What was sent in a MeterValues message (SoC as reported: whole percent). */
export interface MeterValuesEvent {
  connectorId: number;
  transactionId?: number;
  registerWh: number;
  powerW: number;
  socPercent?: number;
}

export interface ConfigurationChangedEvent {
  key: string;
  value: string;
}

export interface WarningEvent {
  message: string;
  error?: unknown;
}

export interface FrameEvent {
  direction: 'in' | 'out';
  message: string;
}

export interface ChargePointEvents {
  /** Boot accepted and connector statuses sent (also after a Reset). */
  connected: [ConnectedEvent];
  /** The socket dropped; the client reconnects unless disconnect() was called. */
  disconnected: [DisconnectedEvent];
  /** The socket came back after a drop (no new BootNotification, as the spec says). */
  reconnected: [{ identity: string }];
  status: [StatusEvent];
  plugged: [PluggedEvent];
  unplugged: [ConnectorEvent];
  vehicleFull: [ConnectorEvent];
  transactionStarted: [TransactionStartedEvent];
  transactionStopped: [TransactionStoppedEvent];
  remoteStart: [RemoteStartEvent];
  remoteStop: [RemoteStopEvent];
  meterValues: [MeterValuesEvent];
  configurationChanged: [ConfigurationChangedEvent];
  reset: [{ type: 'Hard' | 'Soft' }];
  /** Recoverable problems (failed calls, timeouts); deliberately not 'error', which throws. */
  warning: [WarningEvent];
  /** Every raw OCPP-J frame, for tracing. */
  frame: [FrameEvent];
}

export type ChargePointEventName = keyof ChargePointEvents;
export type ChargePointEventPayload<K extends ChargePointEventName> = ChargePointEvents[K][0];
