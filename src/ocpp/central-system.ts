import type { Server } from 'node:http';
import ocppRpc from 'ocpp-rpc';
import type { SiteDirectory } from '../config/site.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import { ADAPTERS, ASSUMED_PROTOCOL, NORMALIZERS, pickProtocol } from './adapters.js';
import { ChargerCalls } from './calls/charger-calls.js';
import { OperatorChargerCalls } from './calls/operator-charger-calls.js';
import { AvailabilityHolds } from './charger-state/availability-holds.js';
import { BookkeepingWrites } from './charger-state/bookkeeping-writes.js';
import { ChargerClocks } from './charger-state/charger-clocks.js';
import { ChargerInfo } from './charger-state/charger-info.js';
import { ChargerSampling } from './charger-state/charger-sampling.js';
import { clockStore } from './charger-state/clock-store.js';
import { ChargerConfiguration } from './charger-state/configuration.js';
import { ConnectorStateStore } from './charger-state/connector-state.js';
import { KeptReports, type ReportKeepers } from './charger-state/kept-reports.js';
import type { StationPayment } from './charger-state/reports.js';
import { ChargerScreens } from './charger-state/screen-support.js';
import {
  SETTINGS_PACING,
  SettingsPacing,
  type SettingsPacingOptions,
} from './charger-state/settings-pacing.js';
import { AdmissionGate } from './connection/admission-gate.js';
import { Connections, type Connection } from './connection/connections.js';
import { ChargerDeviations } from './connection/deviations.js';
import { OcppEventLog } from './connection/event-log.js';
import { keptAliveSocket } from './connection/link-liveness.js';
import { limitMessageRate, type MessageRate } from './connection/message-rate.js';
import type { OcppDirection, OcppObserver, OcppOutcome } from './connection/observed-connection.js';
import { connectionPipeline } from './connection/pipeline.js';
import { countRefusedFrames } from './connection/refused-frames.js';
import { bareRefusal, takeUpgrades, type UpgradeRefusal } from './connection/upgrades.js';
import { ChargerMetering } from './metering/metering.js';
import type { ChargerEvents, ConnectorView, TransferStatus } from './port.js';

const { RPCServer } = ocppRpc;
type WsServerOptions = NonNullable<ConstructorParameters<typeof RPCServer>[0]['wssOptions']>;

export interface CentralSystemOptions {
  db: Db;
  site: SiteDirectory;
  clock: Clock;
  log: Logger;
  path: string;
  heartbeatIntervalSeconds: number;
  meterSampleIntervalSeconds: number;
  /** How long a charger waits for the EV after a remote start (its ConnectionTimeOut). */
  connectionTimeoutSeconds: number;
  callTimeoutMs: number;
  /** Largest frame a charger may send (ws maxPayload); a larger one closes with 1009. */
  maxFrameBytes: number;
  /** A link silent this long is pinged; silent as long again after the ping, it is dropped. */
  pingIntervalMs: number;
  /** Incoming messages per connection: burst, then perSecond; beyond it the link is closed. */
  messageRate: MessageRate;
  /** Delay before refusing a failed admission, doubling per failure from the same address. */
  authFailureDelay: { initialMs: number; maxMs: number };
  /** Whether a paid session's driver is told anything on the charger's screen (default true). */
  screens?: boolean;
  /** Optional: every connector status or SoC change (connector `*` is the whole charger). */
  onConnectorChange?: (view: ConnectorView) => void;
  /** Optional: told of every OCPP call and its answer (metrics). */
  observer?: OcppObserver;
  /** Optional: a charger's live connection closed (not one replaced by its own reconnect). */
  onChargerOffline?: (chargerId: string) => void;
  /** Optional: a schema deviation the edge accepted from a charger (after it is counted). */
  onDeviation?: (chargerId: string, kind: string) => void;
  /** Optional: every call with one charger, once answered (its action and outcome, no payload). */
  onCall?: (chargerId: string, call: OcppCall) => void;
  /** Optional: a charger's firmware or log job progress (its status notifications). */
  onTransferStatus?: (chargerId: string, status: TransferStatus) => void;
  /** Optional: a payment a station's own terminal settled (never billed: the operator reconciles). */
  onStationPayment?: (chargerId: string, payment: StationPayment) => void;
  /** When booted chargers' settings are read (settings-pacing.ts); default SETTINGS_PACING. */
  settingsPacing?: SettingsPacingOptions;
  /** A charger holding several passwords was admitted with the one stored as `credential`. */
  onCredentialUsed?: (chargerId: string, credential: string) => void;
}

/** One call between the gateway and a charger, as the operator's recent-messages list shows it. */
export interface OcppCall {
  action: string;
  direction: OcppDirection;
  outcome: OcppOutcome;
  seconds: number;
}

/**
 * The OCPP central system: authenticates chargers before the WebSocket upgrade, keeps one live
 * connection per charger (a newer one replaces an older one) and routes each to its protocol
 * adapter. It assembles the parts and hands out the version-neutral port: `calls` (the charging
 * and load layers' ChargerCommands) and `operatorCalls` (the operator's ChargerOperations).
 */
export class CentralSystem {
  readonly calls: ChargerCalls;
  readonly operatorCalls: OperatorChargerCalls;
  /** What chargers send that departs from the schemas and was accepted (for the operator). */
  readonly deviations: ChargerDeviations;
  private readonly server: InstanceType<typeof RPCServer>;
  private readonly connections = new Connections();
  private readonly admission: AdmissionGate;
  private readonly settingsReads: SettingsPacing;
  private readonly bookkeeping: BookkeepingWrites;
  /** Each charger's clock offset: when each stamped message was measured (charger-clocks.ts). */
  private readonly clocks: ChargerClocks;
  private readonly connectorState: ConnectorStateStore;
  private readonly eventLog: OcppEventLog;
  private readonly metering: ChargerMetering;
  private readonly info: ChargerInfo;
  private readonly configuration: ChargerConfiguration;
  private readonly screens: ChargerScreens;
  /** Where every connection's reports are kept. */
  private readonly keepers: ReportKeepers;
  private events: ChargerEvents | null = null;

  constructor(private readonly opts: CentralSystemOptions) {
    const { db, site, clock, log } = opts;
    this.settingsReads = new SettingsPacing(opts.settingsPacing ?? SETTINGS_PACING);
    this.bookkeeping = new BookkeepingWrites(db, log);
    this.clocks = new ChargerClocks(
      clockStore(db, clock, (w) => this.bookkeeping.add(w, 'clock offset')),
      clock.now(),
    );
    this.connectorState = new ConnectorStateStore(db, clock, opts.onConnectorChange, (w) =>
      this.bookkeeping.add(w, 'connector status'),
    );
    this.eventLog = new OcppEventLog(db, clock, log);
    const holds = new AvailabilityHolds(db);
    this.deviations = new ChargerDeviations(db, clock, log);
    this.metering = new ChargerMetering(db, clock);
    const sampling = new ChargerSampling(db, clock, log);
    this.info = new ChargerInfo(db, clock, log, this.bookkeeping);
    this.screens = new ChargerScreens(this.eventLog, log);
    const connections = this.connections;
    this.configuration = new ChargerConfiguration({
      connections,
      site,
      log,
      settings: {
        meterSampleIntervalSeconds: opts.meterSampleIntervalSeconds,
        connectionTimeoutSeconds: opts.connectionTimeoutSeconds,
      },
      settingsReads: this.settingsReads,
      eventLog: this.eventLog,
      sampling,
      holds,
    });
    this.calls = new ChargerCalls({
      connections,
      site,
      connectorState: this.connectorState,
      metering: this.metering,
      sampling,
      holds,
      settingsReads: this.settingsReads,
      configuration: this.configuration,
      screens: opts.screens ?? true,
      screenWays: this.screens,
    });
    this.operatorCalls = new OperatorChargerCalls({ connections, site, clock, holds });
    this.keepers = {
      info: this.info,
      clocks: this.clocks,
      connectorState: this.connectorState,
      eventLog: this.eventLog,
      deviations: this.deviations,
      metering: this.metering,
      events: () => this.requireEvents(),
      afterBoot: (id) => {
        this.screens.forget(id);
        this.configuration.booted(id);
      },
      ...(opts.onDeviation ? { onDeviation: opts.onDeviation } : {}),
      ...(opts.onTransferStatus ? { onTransferStatus: opts.onTransferStatus } : {}),
      ...(opts.onStationPayment ? { onStationPayment: opts.onStationPayment } : {}),
    };
    this.admission = new AdmissionGate({
      site,
      clock,
      log,
      path: opts.path,
      authFailureDelay: opts.authFailureDelay,
      pickProtocol,
      ...(opts.onCredentialUsed ? { onCredentialUsed: opts.onCredentialUsed } : {}),
    });
    this.server = new RPCServer({
      protocols: [...ADAPTERS.keys()],
      // Tolerant in, strict out: edge.ts repairs and validates each frame itself.
      strictMode: false,
      callTimeoutMs: opts.callTimeoutMs,
      // Each link keeps itself alive (link-liveness.ts); 0 turns ocpp-rpc's keep-alive off.
      pingIntervalMs: 0,
      respondWithDetailedErrors: false,
      wssOptions: {
        maxPayload: opts.maxFrameBytes,
        // ocpp-rpc sees ws through its CommonJS typings, whose class also carries the module's
        // other exports as statics: the same class at run time.
        WebSocket: keptAliveSocket(opts.pingIntervalMs) as unknown as WsServerOptions['WebSocket'],
      },
    });
    this.server.auth((accept, reject, handshake) =>
      this.admission.decide(accept, reject, handshake),
    );
    this.server.on('client', (client: ClientLike) => this.onClient(client));
  }

  setEvents(events: ChargerEvents): void {
    this.events = events;
  }

  /**
   * Takes WebSocket upgrades for `<path>/<chargePointId>` on an HTTP(S) server (the API's, and the
   * TLS listener for chargers); refuses others.
   */
  attach(http: Server, refuse: UpgradeRefusal = bareRefusal): void {
    takeUpgrades(
      http,
      this.opts.path,
      (request, socket, head) =>
        void this.server.handleUpgrade(
          request,
          socket as Parameters<typeof this.server.handleUpgrade>[1],
          head,
        ),
      refuse,
    );
  }

  onlineCount(): number {
    return this.connections.size;
  }

  /** Connected chargers per OCPP protocol. */
  onlineByProtocol(): Map<string, number> {
    return this.connections.byProtocol();
  }

  /** The OCPP protocol a connected charger speaks, or undefined when it is offline. */
  protocolOf(chargerId: string): string | undefined {
    return this.connections.get(chargerId)?.protocol;
  }

  /** Ends a charger's connection (it was retired); admission refuses it when it comes back. */
  disconnect(chargerId: string, reason: string): boolean {
    const connection = this.connections.get(chargerId);
    if (!connection) return false;
    void connection.client.close({ code: 1000, reason });
    return true;
  }

  async close(): Promise<void> {
    this.admission.close();
    this.settingsReads.close();
    await this.server.close({ force: true });
    this.connections.clear();
    this.bookkeeping.flush();
  }

  /** The metrics observer and, when configured, the per-charger call hook, as one observer. */
  private observerFor(chargerId: string): OcppObserver | undefined {
    const { observer, onCall } = this.opts;
    if (!onCall) return observer;
    return {
      call: (protocol, action, direction, outcome, seconds) => {
        observer?.call(protocol, action, direction, outcome, seconds);
        onCall(chargerId, { action, direction, outcome, seconds });
      },
    };
  }

  private requireEvents(): ChargerEvents {
    if (!this.events) throw new Error('central system has no event sink');
    return this.events;
  }

  /** A charger's link, from the raw client through the connection pipeline to its adapter. */
  private onClient(raw: ClientLike): void {
    const chargerId = raw.identity;
    const client = raw as unknown as Connection['client'];
    const previous = this.connections.get(chargerId);
    if (previous) {
      this.opts.log.warn(
        { chargerId },
        'second connection for the same charger: closing the older one',
      );
      void previous.client.close({ code: 1000, reason: 'replaced by a newer connection' });
    }
    const protocol = raw.protocol || ASSUMED_PROTOCOL;
    const adapt = ADAPTERS.get(protocol);
    const normalizer = NORMALIZERS.get(protocol);
    if (!adapt || !normalizer) throw new Error(`no adapter for ${protocol}`);
    const reports = new KeptReports(chargerId, this.keepers);
    const internalError = (method: string, err: unknown) =>
      this.opts.log.error({ chargerId, method, err }, 'ocpp handler failed: InternalError sent');
    const adapter = adapt({
      chargerId,
      rpc: connectionPipeline(
        client,
        protocol,
        normalizer,
        this.observerFor(chargerId),
        reports,
        internalError,
      ),
      db: this.opts.db,
      site: this.opts.site,
      clock: this.opts.clock,
      log: this.opts.log,
      events: this.keepers.events,
      reports,
      clocks: this.clocks,
      screens: this.screens,
      heartbeatIntervalSeconds: this.opts.heartbeatIntervalSeconds,
      callTimeoutMs: this.opts.callTimeoutMs,
    });
    const connection: Connection = { client, adapter, protocol };
    this.connections.set(chargerId, connection);
    this.info.connected(chargerId, protocol);
    this.opts.log.info(
      { chargerId, protocol: raw.protocol ?? `none offered, taken as ${protocol}` },
      'charger connected',
    );
    countRefusedFrames(raw, chargerId, reports, this.opts.log);
    limitMessageRate(
      raw,
      () => void client.close({ code: 1008, reason: 'message rate exceeded' }),
      this.opts.messageRate,
      this.opts.clock,
      this.opts.log,
    );
    raw.on('close', () => {
      if (this.connections.ended(chargerId, connection)) {
        this.settingsReads.forget(chargerId);
        this.opts.log.info({ chargerId }, 'charger disconnected');
        this.opts.onChargerOffline?.(chargerId);
      }
    });
    this.clocks.connected(chargerId, this.opts.clock.now());
    this.requireEvents().chargerOnline(chargerId);
  }
}

/** What the central system reads of an ocpp-rpc server-side client. */
interface ClientLike {
  identity: string;
  protocol: string | undefined;
  on(event: 'close', listener: () => void): void;
  on(event: 'message', listener: (event: { message: unknown; outbound: boolean }) => void): void;
  on(event: 'badMessage', listener: (event: { buffer: unknown }) => void): void;
}
