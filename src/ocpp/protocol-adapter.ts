import type { SiteDirectory } from '../config/site.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import type {
  ChargerEvents,
  ChargerReply,
  ChargerSettings,
  CommandOutcome,
  ConfigurationReport,
  FirmwareRequest,
  LocalAuthCapability,
  LocalAuthSettings,
  LocalListOutcome,
  LocalListUpdate,
  LogReply,
  LogRequest,
  PowerLimit,
  ResetKind,
  PowerLimitOutcome,
  ScreenNote,
  ScreenOutcome,
  StepOutcome,
  TransactionLimit,
  TransactionProbe,
  TriggerKind,
} from './port.js';
import type { ChargerClocks } from './charger-state/charger-clocks.js';
import type { ChargerReports } from './charger-state/reports.js';
import type { ChargerScreens } from './charger-state/screen-support.js';
import type { RpcConnection } from './connection/rpc.js';

/** What an adapter is given for one connected charger. */
export interface AdapterContext {
  chargerId: string;
  rpc: RpcConnection;
  db: Db;
  site: SiteDirectory;
  clock: Clock;
  log: Logger;
  /** Session matters: tokens, transactions, meter samples. */
  events: () => ChargerEvents;
  /** Charger matters: boot, status, vehicle, oddities. */
  reports: ChargerReports;
  /** When each stamped message was measured, on our clock (shared by every connection). */
  clocks: ChargerClocks;
  /** What each charger can show its driver (shared by every connection). */
  screens: ChargerScreens;
  heartbeatIntervalSeconds: number;
  callTimeoutMs: number;
}

/** What configuring a charger came to. */
export interface Configured {
  /** Names of the settings the charger did not take. */
  refused: string[];
  /** Why the charger will not sample a transaction at the interval asked for (sampling-gap.ts), or null. */
  samplingGap: string | null;
  /** A soft reset now would cut no transaction (1.6 Soft ends them; 2.0.1 OnIdle waits for them). */
  idle: boolean;
}

/** What every protocol adapter offers the central system for one connected charger. */
export interface ChargerAdapter {
  requestStart(connectorId: string, idToken: string): Promise<CommandOutcome>;
  requestStop(transactionRef: string): Promise<CommandOutcome>;
  configure(settings: ChargerSettings): Promise<Configured>;
  limitToZero(connectorId: string, transactionRef: string): Promise<StepOutcome>;
  setPowerLimit(connectorId: string, limit: PowerLimit): Promise<PowerLimitOutcome>;
  setAvailability(connectorId: string, operative: boolean): Promise<StepOutcome>;
  unlockConnector(connectorId: string): Promise<StepOutcome>;
  probeTransaction(connectorId: string, transactionRef: string): Promise<TransactionProbe>;
  /** The limit the charger holds itself (OCPP 2.1); absent where the protocol has none. */
  setTransactionLimit?(transactionRef: string, limit: TransactionLimit): Promise<StepOutcome>;
  /** Reads what the charger can show, unless known: before a Start, so its first answer can. */
  prepareScreen(): void;
  /** Says the note the way this protocol can, if the charger advertised it; never throws. */
  showOnScreen(note: ScreenNote): Promise<ScreenOutcome>;
  /** The operator's commands, in this protocol's words. */
  readonly operator: OperatorCalls;
  /** The charger's local list and authorization cache, in this protocol's words. */
  readonly localAuth: LocalAuthCalls;
}

/** A charger's local authorization list and cache (port.ts ChargerLocalAuthorization). */
export interface LocalAuthCalls {
  prepare(settings: LocalAuthSettings): Promise<LocalAuthCapability>;
  listVersion(): Promise<number | null>;
  sendList(update: LocalListUpdate): Promise<LocalListOutcome>;
  clearCache(): Promise<StepOutcome>;
}

/**
 * The operator's commands to one connected charger. Connectors are the charger's own numbers
 * (1.6 connectorId, 2.0.1 evseId); null means the whole charger.
 */
export interface OperatorCalls {
  requestStop(transactionRef: string): Promise<ChargerReply>;
  unlockConnector(ocppConnectorId: number): Promise<ChargerReply>;
  reset(kind: ResetKind): Promise<ChargerReply>;
  setAvailability(ocppConnectorId: number | null, operative: boolean): Promise<ChargerReply>;
  trigger(ocppConnectorId: number | null, kind: TriggerKind): Promise<ChargerReply>;
  readConfiguration(keys: readonly string[]): Promise<ConfigurationReport>;
  changeConfiguration(key: string, value: string): Promise<ChargerReply>;
  /** Sets the password the charger sends in HTTP basic auth (profiles 1 and 2). */
  setBasicAuthPassword(password: string): Promise<ChargerReply>;
  updateFirmware(request: FirmwareRequest): Promise<ChargerReply>;
  requestLog(request: LogRequest): Promise<LogReply>;
}

export type ProtocolAdapter = (ctx: AdapterContext) => ChargerAdapter;
