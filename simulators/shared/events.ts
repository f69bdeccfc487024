import type { VehicleSpec } from './metered-outlet.js';

/** Stop reasons that OCPP 1.6 (Reason) and 2.0.1 (ReasonEnumType) both define. */
export const COMMON_STOP_REASONS = [
  'Local',
  'Remote',
  'EVDisconnected',
  'PowerLoss',
  'Reboot',
  'Other',
  'EmergencyStop',
  'DeAuthorized',
] as const;
export type CommonStopReason = (typeof COMMON_STOP_REASONS)[number];

/** Every stop reason a simulator reports: the common ones plus each version's own. */
export type StopReasonName =
  | CommonStopReason
  | 'HardReset' // 1.6 Reset Hard
  | 'SoftReset' // 1.6 Reset Soft
  | 'UnlockCommand' // 1.6 UnlockConnector
  | 'ImmediateReset' // 2.0.1 Reset Immediate
  | 'Timeout' // 2.0.1 no EV within EVConnectionTimeOut after TxStartPoint Authorized
  | 'EnergyLimitReached'; // 2.1 the station's own transactionLimit (energy or cost)

/** 1.6 ChargePointStatus and 2.0.1 ConnectorStatusEnumType (which adds Occupied). */
export type ConnectorStatusName =
  | 'Available'
  | 'Preparing'
  | 'Charging'
  | 'SuspendedEVSE'
  | 'SuspendedEV'
  | 'Finishing'
  | 'Reserved'
  | 'Unavailable'
  | 'Faulted'
  | 'Occupied';

/** Statuses a test can force in both versions with setStatus(). */
export type ForcedStatus = 'Available' | 'Unavailable' | 'Faulted' | 'Reserved';

/**
 * The 1.6 ChargePointErrorCode vocabulary. 1.6 sends it in StatusNotification; 2.0.1 reports
 * anything but NoError as a NotifyEvent (variable Problem, techInfo = the code).
 */
export type FaultCode =
  | 'ConnectorLockFailure'
  | 'EVCommunicationError'
  | 'GroundFailure'
  | 'HighTemperature'
  | 'InternalError'
  | 'LocalListConflict'
  | 'NoError'
  | 'OtherError'
  | 'OverCurrentFailure'
  | 'PowerMeterFailure'
  | 'PowerSwitchFailure'
  | 'ReaderFailure'
  | 'ResetFailure'
  | 'UnderVoltage'
  | 'OverVoltage'
  | 'WeakSignal';

/**
 * What the protocol versions disagree on in event payloads and state. ChargePoint16 and
 * ChargePoint201 each fill it in precisely; code that drives both uses AnyProtocol.
 */
export interface ProtocolFlavour {
  /** 1.6: the central system's integer; 2.0.1: the station's UUID. */
  transactionId: string | number;
  status: ConnectorStatusName;
  errorCode: FaultCode;
  stopReason: StopReasonName;
  /** 1.6 Hard|Soft; 2.0.1 Immediate|OnIdle. */
  resetType: 'Hard' | 'Soft' | 'Immediate' | 'OnIdle';
}

/** The version-neutral view: every field as wide as the two versions together. */
export type AnyProtocol = ProtocolFlavour;

export interface ConnectedEvent {
  identity: string;
  heartbeatIntervalSeconds: number;
}

export interface DisconnectedEvent {
  code?: number;
  reason?: string;
}

export interface StatusEvent<P extends ProtocolFlavour = AnyProtocol> {
  /** The 1.6 connector or the 2.0.1 EVSE. */
  connectorId: number;
  status: P['status'];
  errorCode: P['errorCode'];
}

export interface PluggedEvent {
  connectorId: number;
  vehicle: VehicleSpec;
}

export interface ConnectorEvent {
  connectorId: number;
}

export interface TransactionStartedEvent<P extends ProtocolFlavour = AnyProtocol> {
  connectorId: number;
  transactionId: P['transactionId'];
  /** 1.6 idTag; 2.0.1 idToken.idToken. */
  idTag: string;
  meterStart: number;
}

export interface TransactionStoppedEvent<P extends ProtocolFlavour = AnyProtocol> {
  connectorId: number;
  transactionId: P['transactionId'];
  meterStop: number;
  reason: P['stopReason'];
}

export interface RemoteStartEvent {
  connectorId: number | undefined;
  idTag: string;
  status: 'Accepted' | 'Rejected' | 'Ignored';
}

/** What a card tap (or a vehicle's identification) did at the connector. */
export type TapOutcome =
  /** A transaction started, or one waiting for its token (2.0.1 EVConnected) was authorized. */
  | 'started'
  /** Authorized; the charger waits for the vehicle (1.6 ConnectionTimeOut, 2.0.1 EVConnectionTimeOut). */
  | 'waiting'
  /** The token that started the running transaction ended it. */
  | 'stopped'
  /** The central system's Authorize answer was not Accepted: nothing starts. */
  | 'refused'
  /** Nothing to do: another token while a transaction runs, or the connector is busy or out of order. */
  | 'ignored'
  /** Authorize could not be asked (no link, no answer). */
  | 'failed';

/** A card tapped at a connector's reader, or a vehicle identified at plug-in (AutoCharge). */
export interface TappedEvent {
  connectorId: number;
  /** The idTag / idToken.idToken as the charger sent it (its personality's form). */
  idTag: string;
  source: 'card' | 'vehicle';
  /** The answer to Authorize; absent when the charger did not ask (skips-authorize, a stop). */
  status?: string;
  outcome: TapOutcome;
}

export interface RemoteStopEvent<P extends ProtocolFlavour = AnyProtocol> {
  transactionId: P['transactionId'];
  status: 'Accepted' | 'Rejected';
}

/** What was sent in a meter sample (SoC as reported: whole percent). */
export interface MeterValuesEvent<P extends ProtocolFlavour = AnyProtocol> {
  connectorId: number;
  transactionId?: P['transactionId'];
  registerWh: number;
  powerW: number;
  socPercent?: number;
}

/** A SetChargingProfile the charger accepted; applied: its limit now holds the power. */
export interface ChargingProfileEvent {
  connectorId: number;
  purpose: string;
  applied: boolean;
}

/** The power limit the installed profiles compose to took effect on a connector (null: none). */
export interface PowerLimitEvent {
  connectorId: number;
  limitW: number | null;
}

export interface ConfigurationChangedEvent {
  /** 1.6 configuration key; 2.0.1 "Component.Variable". */
  key: string;
  value: string;
}

export interface ResetEvent<P extends ProtocolFlavour = AnyProtocol> {
  type: P['resetType'];
}

/** What the charger's display was told (cost-screen): the message or field that said it. */
export interface ScreenEvent {
  via: string;
  text?: string;
  /** Whole NGN: a running or final cost. */
  cost?: number;
  transactionId?: string | number;
}

export interface WarningEvent {
  message: string;
  error?: unknown;
}

export interface FrameEvent {
  direction: 'in' | 'out';
  message: string;
}

export interface ChargePointEvents<P extends ProtocolFlavour = AnyProtocol> {
  /** Boot accepted and connector statuses sent (also after a Reset). */
  connected: [ConnectedEvent];
  /** The socket dropped; the client reconnects unless disconnect() was called. */
  disconnected: [DisconnectedEvent];
  /** The socket came back after a drop (no new BootNotification, as the specs say). */
  reconnected: [{ identity: string }];
  status: [StatusEvent<P>];
  plugged: [PluggedEvent];
  unplugged: [ConnectorEvent];
  vehicleFull: [ConnectorEvent];
  transactionStarted: [TransactionStartedEvent<P>];
  transactionStopped: [TransactionStoppedEvent<P>];
  remoteStart: [RemoteStartEvent];
  tapped: [TappedEvent];
  remoteStop: [RemoteStopEvent<P>];
  meterValues: [MeterValuesEvent<P>];
  configurationChanged: [ConfigurationChangedEvent];
  chargingProfile: [ChargingProfileEvent];
  powerLimit: [PowerLimitEvent];
  reset: [ResetEvent<P>];
  screen: [ScreenEvent];
  /** Recoverable problems (failed calls, timeouts); deliberately not 'error', which throws. */
  warning: [WarningEvent];
  /** Every raw OCPP-J frame, for tracing. */
  frame: [FrameEvent];
}

export type ChargePointEventName = keyof ChargePointEvents;
export type ChargePointEventPayload<
  K extends ChargePointEventName,
  P extends ProtocolFlavour = AnyProtocol,
> = ChargePointEvents<P>[K][0];
