import type { SiteDirectory } from '../../config/site.js';
import type { AvailabilityHolds } from '../charger-state/availability-holds.js';
import type { ChargerSampling } from '../charger-state/charger-sampling.js';
import type { ChargerConfiguration } from '../charger-state/configuration.js';
import { WHOLE_CHARGER, type ConnectorStateStore } from '../charger-state/connector-state.js';
import type { SettingsPacing } from '../charger-state/settings-pacing.js';
import type { ChargerScreens } from '../charger-state/screen-support.js';
import type { Connections } from '../connection/connections.js';
import type { ChargerMetering } from '../metering/metering.js';
import type {
  ChargerCommands,
  ChargerLocalAuthorization,
  LocalAuthCapability,
  LocalAuthSettings,
  LocalListOutcome,
  LocalListUpdate,
  CommandOutcome,
  ConnectorView,
  MeteringCapability,
  PowerLimit,
  ScreenNote,
  ScreenOutcome,
  StartRequest,
  PowerLimitOutcome,
  StepOutcome,
  TransactionLimit,
  TransactionProbe,
} from '../port.js';

export interface ChargerCallsDeps {
  connections: Connections;
  site: SiteDirectory;
  connectorState: ConnectorStateStore;
  metering: ChargerMetering;
  sampling: ChargerSampling;
  holds: AvailabilityHolds;
  settingsReads: SettingsPacing;
  configuration: ChargerConfiguration;
  /** Whether the drivers' screens are told anything (config `screens.enabled`). */
  screens: boolean;
  /** What each charger's screen can show, as read from it. */
  screenWays: ChargerScreens;
}

/** Statuses in which a connector cannot take a new session whoever asks. */
const CHARGER_WIDE_BLOCKING = new Set(['unavailable', 'faulted']);

/**
 * The charger port's commands (what the charging and load layers ask of chargers): each goes to
 * the adapter of the charger's live connection, or fails with ChargerOfflineError.
 */
export class ChargerCalls implements ChargerCommands, ChargerLocalAuthorization {
  constructor(private readonly deps: ChargerCallsDeps) {}

  isOnline(chargerId: string): boolean {
    return this.deps.connections.has(chargerId);
  }

  meteringCapability(chargerId: string): MeteringCapability {
    return this.deps.metering.capability(chargerId);
  }

  samplingGap(chargerId: string): string | null {
    return this.deps.sampling.gap(chargerId);
  }

  connector(chargerId: string, connectorId: string): ConnectorView {
    const view = this.deps.connectorState.get(chargerId, connectorId);
    const whole = this.deps.connectorState.get(chargerId, WHOLE_CHARGER);
    return CHARGER_WIDE_BLOCKING.has(whole.status)
      ? { ...view, status: whole.status, errorCode: whole.errorCode }
      : view;
  }

  /** Synchronous up to the adapter's own first wait: a note may ride on the answer being made. */
  showOnScreen(note: ScreenNote): Promise<ScreenOutcome> {
    const connection = this.deps.connections.get(note.chargerId);
    if (!connection) return Promise.resolve('offline');
    return connection.adapter.showOnScreen(note).catch(() => 'refused' as const);
  }

  showsNothing(chargerId: string): boolean {
    return this.deps.screenWays.known(chargerId)?.size === 0;
  }

  async requestStart(request: StartRequest): Promise<CommandOutcome> {
    this.deps.settingsReads.promote(request.chargerId);
    const adapter = this.adapter(request.chargerId);
    // The station's answers to this session's first messages can then carry the driver's text.
    if (this.deps.screens) adapter.prepareScreen();
    return adapter.requestStart(request.connectorId, request.idToken);
  }

  async requestStop(chargerId: string, transactionRef: string): Promise<CommandOutcome> {
    return this.adapter(chargerId).requestStop(transactionRef);
  }

  async limitToZero(
    chargerId: string,
    connectorId: string,
    transactionRef: string,
  ): Promise<StepOutcome> {
    return this.adapter(chargerId).limitToZero(connectorId, transactionRef);
  }

  async setPowerLimit(
    chargerId: string,
    connectorId: string,
    limit: PowerLimit,
  ): Promise<PowerLimitOutcome> {
    return this.adapter(chargerId).setPowerLimit(connectorId, limit);
  }

  async setAvailability(
    chargerId: string,
    connectorId: string,
    operative: boolean,
  ): Promise<StepOutcome> {
    return this.adapter(chargerId).setAvailability(connectorId, operative);
  }

  async unlockConnector(chargerId: string, connectorId: string): Promise<StepOutcome> {
    return this.adapter(chargerId).unlockConnector(connectorId);
  }

  async probeTransaction(
    chargerId: string,
    connectorId: string,
    transactionRef: string,
  ): Promise<TransactionProbe> {
    return this.adapter(chargerId).probeTransaction(connectorId, transactionRef);
  }

  /** 1.6 and 2.0.1 hold no limit of their own: nothing is sent. */
  async setTransactionLimit(
    chargerId: string,
    transactionRef: string,
    limit: TransactionLimit,
  ): Promise<StepOutcome> {
    const adapter = this.adapter(chargerId);
    return adapter.setTransactionLimit
      ? adapter.setTransactionLimit(transactionRef, limit)
      : 'not_supported';
  }

  configure(chargerId: string): Promise<string[]> {
    return this.deps.configuration.configure(chargerId);
  }

  operatorHold(chargerId: string, connectorId: string): string | null {
    return this.deps.holds.hold(chargerId, connectorId);
  }

  async prepareLocalAuthorization(
    chargerId: string,
    settings: LocalAuthSettings,
  ): Promise<LocalAuthCapability> {
    return this.adapter(chargerId).localAuth.prepare(settings);
  }

  async localListVersion(chargerId: string): Promise<number | null> {
    return this.adapter(chargerId).localAuth.listVersion();
  }

  async sendLocalList(chargerId: string, update: LocalListUpdate): Promise<LocalListOutcome> {
    return this.adapter(chargerId).localAuth.sendList(update);
  }

  async clearCache(chargerId: string): Promise<StepOutcome> {
    return this.adapter(chargerId).localAuth.clearCache();
  }

  private adapter(chargerId: string) {
    return this.deps.connections.live(chargerId).adapter;
  }
}
