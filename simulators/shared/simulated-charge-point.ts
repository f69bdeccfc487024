import type {
  AnyProtocol,
  ChargePointEventName,
  ChargePointEventPayload,
  CommonStopReason,
  FaultCode,
  ForcedStatus,
  ProtocolFlavour,
  TappedEvent,
} from './events.js';
import type { ConnectorLocks } from './connector-locks.js';
import type { VehicleSpec } from './metered-outlet.js';
import type { LocalAuthList } from './local-list.js';

export type * from './events.js';
export type { ChargePointOptions, RemoteStartPolicy } from './charge-point-options.js';
export type { VehicleSpec } from './metered-outlet.js';
export type { LockBehaviour } from './connector-locks.js';

export interface TapOptions {
  /** 2.0.1 IdTokenEnumType of the card (1.6 has none). */
  type?: 'ISO14443' | 'ISO15693' | 'KeyCode' | 'Local' | 'Central' | 'eMAID';
}

/** One connector (1.6) or EVSE (2.0.1) as a test observes it. */
export interface ConnectorState<P extends ProtocolFlavour = AnyProtocol> {
  status: P['status'];
  errorCode: P['errorCode'];
  transactionId?: P['transactionId'];
  registerWh: number;
  /** Exact simulated SoC (meter values report it floored to whole percent). */
  socPercent?: number;
  /** Of the running transaction, or of a remote start waiting for the vehicle. */
  idTag?: string;
  /** Energy delivered in the running transaction (0 when none runs). */
  deliveredWh: number;
  powerW: number;
  plugged: boolean;
}

/**
 * What tests and the CLI can do with a simulated charger of either protocol version, without
 * branching on it. `connectorId` is the 1.6 connector or the 2.0.1 EVSE id.
 */
export interface SimulatedChargePoint<P extends ProtocolFlavour = AnyProtocol> {
  readonly identity: string;
  /** Simulated seconds per wall-clock second. */
  readonly timeFactor: number;
  readonly connectorCount: number;
  readonly isBooted: boolean;
  /** The connectors' cable locks: how each answers an unlock request. */
  readonly locks: ConnectorLocks;
  /** Connects, boots (retrying while Pending/Rejected) and reports every status. */
  connect(): Promise<void>;
  /** Switches the charger off; a running transaction ends with PowerLoss on the next connect. */
  disconnect(): Promise<void>;
  plugIn(connectorId: number, vehicle: VehicleSpec): Promise<void>;
  unplug(connectorId: number): Promise<void>;
  /**
   * The driver taps an RFID card at the connector's reader: `uid` is its UID in hex as the reader
   * gets it (the charger's personality writes it its way), or any other idTag (a key code). It
   * starts a transaction (after Authorize), waits for the vehicle, or ends the transaction it
   * started. 2.0.1: `type` is the idToken type (default ISO14443).
   */
  tap(connectorId: number, uid: string, options?: TapOptions): Promise<TappedEvent>;
  /** Ends the running transaction early (stop button, fault); the vehicle stays plugged. */
  interrupt(connectorId: number, reason?: CommonStopReason): Promise<void>;
  /** Reports a status even if unchanged; connectorId 0 is the whole charger. */
  setStatus(connectorId: number, status: ForcedStatus, errorCode?: FaultCode): Promise<void>;
  state(connectorId: number): ConnectorState<P>;
  /** Its local authorization list (local-list.ts). */
  readonly localList: LocalAuthList;
  /** A card badged while the link is down: starts from the local list if it accepts it (local-list.ts). */
  startOffline(connectorId: number, token: string): Promise<string>;
  /** Resolves with the first matching event; rejects after timeoutMs (wall clock). */
  waitFor<K extends ChargePointEventName>(
    event: K,
    predicate?: (payload: ChargePointEventPayload<K, P>) => boolean,
    timeoutMs?: number,
  ): Promise<ChargePointEventPayload<K, P>>;
  on<K extends ChargePointEventName>(
    event: K,
    listener: (payload: ChargePointEventPayload<K, P>) => void,
  ): this;
  off<K extends ChargePointEventName>(
    event: K,
    listener: (payload: ChargePointEventPayload<K, P>) => void,
  ): this;
}
