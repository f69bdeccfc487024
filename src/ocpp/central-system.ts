import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import type { Statement } from 'better-sqlite3';
import ocppRpc from 'ocpp-rpc';
import type { SiteDirectory } from '../config/site.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import { TokenBucket } from '../shared/token-bucket.js';
import type { Db } from '../store/database.js';
import { ADAPTERS, ASSUMED_PROTOCOL, NORMALIZERS, pickProtocol } from './adapters.js';
import { admit } from './connection/admission.js';
import { AuthThrottle } from './connection/auth-throttle.js';
import { AvailabilityHolds } from './charger-state/availability-holds.js';
import { BookkeepingWrites } from './charger-state/bookkeeping-writes.js';
import { ChargerClocks } from './charger-state/charger-clocks.js';
import { clockStore } from './charger-state/clock-store.js';
import { ConnectorStateStore, WHOLE_CHARGER } from './charger-state/connector-state.js';
import { ChargerDeviations } from './connection/deviations.js';
import { edgeConnection } from './connection/edge.js';
import { keptAliveSocket } from './connection/link-liveness.js';
import { ChargerMetering } from './metering/metering.js';
import { ChargerSampling } from './charger-state/charger-sampling.js';
import {
  SETTINGS_PACING,
  SettingsPacing,
  type SettingsPacingOptions,
} from './charger-state/settings-pacing.js';
import { OcppEventLog } from './connection/event-log.js';
import {
  observedConnection,
  type OcppDirection,
  type OcppObserver,
  type OcppOutcome,
} from './connection/observed-connection.js';
import {
  ChargerOfflineError,
  type ChargerCommands,
  type PowerLimit,
  type ChargerEvents,
  type ChargerOperations,
  type ChargerReply,
  type ChargerSettings,
  type CommandOutcome,
  type ConfigurationReport,
  type ConnectorView,
  type FirmwareRequest,
  type LogReply,
  type LogRequest,
  type ResetKind,
  type TransferStatus,
  type MeteringCapability,
  type StartRequest,
  type StepOutcome,
  type TransactionProbe,
  type TriggerKind,
} from './port.js';
import type { ChargerAdapter } from './protocol-adapter.js';
import type { BootInfo, ChargerReports } from './charger-state/reports.js';
import { guardedConnection, servingConnection, type RpcClient } from './connection/rpc.js';

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
  messageRate: { perSecond: number; burst: number };
  /** Delay before refusing a failed admission, doubling per failure from the same address. */
  authFailureDelay: { initialMs: number; maxMs: number };
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

/** Who changed a connector's availability, and why: kept with the intent. */
export interface AvailabilityNote {
  by: string;
  reason: string | null;
}

interface Connection {
  client: RpcClient & {
    close(options?: { code?: number; reason?: string }): Promise<unknown>;
  };
  adapter: ChargerAdapter;
  protocol: string;
}

/**
 * Answers an upgrade that is not for a charger, on the raw socket. The server that attaches
 * passes its own (the API's port answers in the API's error shape); the default has no body.
 */
export type UpgradeRefusal = (socket: Duplex, status: 400 | 404, message: string) => void;

const bareRefusal: UpgradeRefusal = (socket, status) => {
  const reason = status === 404 ? 'Not Found' : 'Bad Request';
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
};
/** Statuses in which a connector cannot take a new session whoever asks. */
const CHARGER_WIDE_BLOCKING = new Set(['unavailable', 'faulted']);

/**
 * The OCPP central system: authenticates chargers before the WebSocket upgrade, keeps one live
 * connection per charger (a newer one replaces an older one) and routes each to its protocol
 * adapter. It implements the version-neutral ChargerCommands port.
 */
export class CentralSystem implements ChargerCommands, ChargerOperations {
  private readonly server: InstanceType<typeof RPCServer>;
  private readonly connections = new Map<string, Connection>();
  private readonly connectorState: ConnectorStateStore;
  private readonly eventLog: OcppEventLog;
  private readonly holds: AvailabilityHolds;
  /** What chargers send that departs from the schemas and was accepted (for the operator). */
  readonly deviations: ChargerDeviations;
  private readonly metering: ChargerMetering;
  private readonly sampling: ChargerSampling;
  private events: ChargerEvents | null = null;
  private readonly throttle: AuthThrottle;
  private prepared?: { touch: Statement; boot: Statement };
  private readonly pendingDelays = new Set<NodeJS.Timeout>();
  private readonly settingsReads: SettingsPacing;
  private readonly bookkeeping: BookkeepingWrites;
  /** Each charger's clock offset: when each stamped message was measured (charger-clocks.ts). */
  private readonly clocks: ChargerClocks;

  constructor(private readonly opts: CentralSystemOptions) {
    this.settingsReads = new SettingsPacing(opts.settingsPacing ?? SETTINGS_PACING);
    this.bookkeeping = new BookkeepingWrites(opts.db, opts.log);
    this.clocks = new ChargerClocks(
      clockStore(opts.db, opts.clock, (w) => this.soon(w, 'clock offset')),
      opts.clock.now(),
    );
    this.connectorState = new ConnectorStateStore(
      opts.db,
      opts.clock,
      opts.onConnectorChange,
      (w) => this.soon(w, 'connector status'),
    );
    this.eventLog = new OcppEventLog(opts.db, opts.clock, opts.log);
    this.holds = new AvailabilityHolds(opts.db);
    this.deviations = new ChargerDeviations(opts.db, opts.clock, opts.log);
    this.metering = new ChargerMetering(opts.db, opts.clock);
    this.sampling = new ChargerSampling(opts.db, opts.clock, opts.log);
    this.throttle = new AuthThrottle({
      initialMs: opts.authFailureDelay.initialMs,
      maxMs: opts.authFailureDelay.maxMs,
      clock: opts.clock,
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
    this.server.auth(async (accept, reject, handshake) => {
      const chargerId = handshake.identity;
      const remote = handshake.remoteAddress ?? 'unknown';
      const charger =
        handshake.endpoint === this.opts.path ? this.opts.site.charger(chargerId) : undefined;
      const verdict = await admit(
        charger,
        handshake.password,
        handshake.request.socket as Socket,
        this.opts.clock.now(),
      );
      if (!verdict.admitted) {
        const delayMs = this.throttle.failed(remote);
        this.opts.log.warn(
          {
            chargerId,
            remote,
            delayMs,
            ...(verdict.passwordInClear ? { passwordSentInClear: true } : {}),
          },
          `ocpp connection refused: ${verdict.reason}`,
        );
        await this.delay(delayMs);
        reject(verdict.status, verdict.status === 404 ? 'Not found' : 'Unauthorized');
        return;
      }
      this.throttle.succeeded(remote);
      const protocol = pickProtocol(handshake.protocols);
      if (handshake.protocols.size > 0 && !protocol) {
        this.opts.log.warn(
          { chargerId, remote, offered: [...handshake.protocols] },
          'ocpp connection refused: no supported subprotocol',
        );
        reject(400, 'No supported OCPP subprotocol');
        return;
      }
      if (verdict.credential !== undefined) {
        try {
          this.opts.onCredentialUsed?.(chargerId, verdict.credential);
        } catch (err) {
          // The charger proved its password: a failed bookkeeping write must not refuse it.
          this.opts.log.error(
            { chargerId, err: (err as Error).message },
            'recording the password a charger used failed',
          );
        }
      }
      // A charger that offers no subprotocol gets none back and is held to ASSUMED_PROTOCOL.
      accept({ chargerId }, protocol ?? false);
    });
    this.server.on('client', (client: ClientLike) => this.onClient(client));
  }

  setEvents(events: ChargerEvents): void {
    this.events = events;
  }

  /** Waits before a refusal; close() cuts every wait short so no timer outlives the gateway. */
  private delay(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pendingDelays.delete(timer);
        resolve();
      }, ms);
      this.pendingDelays.add(timer);
    });
  }

  /**
   * Takes WebSocket upgrades for `<path>/<chargePointId>` on an HTTP(S) server (the API's, and the
   * TLS listener for chargers); refuses others.
   */
  attach(http: Server, refuse: UpgradeRefusal = bareRefusal): void {
    const prefix = `${this.opts.path}/`;
    http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = (request.url ?? '/').split('?')[0] ?? '/';
      if (!path.startsWith(prefix)) {
        refuse(socket, 404, 'no WebSocket endpoint at this path');
        return;
      }
      if (!decodableIdentity(path)) {
        // ocpp-rpc would answer a broken %-escape with a 500.
        refuse(socket, 400, 'the charge point id is not valid percent-encoding');
        return;
      }
      void this.server.handleUpgrade(
        request,
        socket as Parameters<typeof this.server.handleUpgrade>[1],
        head,
      );
    });
  }

  isOnline(chargerId: string): boolean {
    return this.connections.has(chargerId);
  }

  meteringCapability(chargerId: string): MeteringCapability {
    return this.metering.capability(chargerId);
  }

  samplingGap(chargerId: string): string | null {
    return this.sampling.gap(chargerId);
  }

  onlineCount(): number {
    return this.connections.size;
  }

  /** Connected chargers per OCPP protocol. */
  onlineByProtocol(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { protocol } of this.connections.values()) {
      counts.set(protocol, (counts.get(protocol) ?? 0) + 1);
    }
    return counts;
  }

  connector(chargerId: string, connectorId: string): ConnectorView {
    const view = this.connectorState.get(chargerId, connectorId);
    const whole = this.connectorState.get(chargerId, WHOLE_CHARGER);
    return CHARGER_WIDE_BLOCKING.has(whole.status)
      ? { ...view, status: whole.status, errorCode: whole.errorCode }
      : view;
  }

  async requestStart(request: StartRequest): Promise<CommandOutcome> {
    this.settingsReads.promote(request.chargerId);
    return this.live(request.chargerId).adapter.requestStart(request.connectorId, request.idToken);
  }

  async requestStop(chargerId: string, transactionRef: string): Promise<CommandOutcome> {
    return this.live(chargerId).adapter.requestStop(transactionRef);
  }

  async limitToZero(
    chargerId: string,
    connectorId: string,
    transactionRef: string,
  ): Promise<StepOutcome> {
    return this.live(chargerId).adapter.limitToZero(connectorId, transactionRef);
  }

  async setPowerLimit(
    chargerId: string,
    connectorId: string,
    limit: PowerLimit,
  ): Promise<StepOutcome> {
    return this.live(chargerId).adapter.setPowerLimit(connectorId, limit);
  }

  async setAvailability(
    chargerId: string,
    connectorId: string,
    operative: boolean,
  ): Promise<StepOutcome> {
    return this.live(chargerId).adapter.setAvailability(connectorId, operative);
  }

  async unlockConnector(chargerId: string, connectorId: string): Promise<StepOutcome> {
    return this.live(chargerId).adapter.unlockConnector(connectorId);
  }

  async probeTransaction(
    chargerId: string,
    connectorId: string,
    transactionRef: string,
  ): Promise<TransactionProbe> {
    return this.live(chargerId).adapter.probeTransaction(connectorId, transactionRef);
  }

  async configure(chargerId: string): Promise<string[]> {
    const done = await this.live(chargerId).adapter.configure(this.settings());
    if (done.refused.length > 0) {
      this.eventLog.record(chargerId, 'configure', `not taken: ${done.refused.join(', ')}`);
    }
    const actions = {
      reset: () => this.reset(chargerId, 'soft'),
      note: (note: string) => this.eventLog.record(chargerId, 'configure', note),
    };
    if (done.samplingGap === null) this.sampling.held(chargerId, actions);
    else await this.sampling.notHeld(chargerId, done.samplingGap, done.idle, actions);
    return done.refused;
  }

  operatorHold(chargerId: string, connectorId: string): string | null {
    return this.holds.hold(chargerId, connectorId);
  }

  stopTransaction(chargerId: string, transactionRef: string): Promise<ChargerReply> {
    return this.live(chargerId).adapter.operator.stopTransaction(transactionRef);
  }

  unlock(chargerId: string, connectorId: string): Promise<ChargerReply> {
    const number = this.ocppNumber(chargerId, connectorId);
    return this.live(chargerId).adapter.operator.unlock(number);
  }

  reset(chargerId: string, kind: ResetKind): Promise<ChargerReply> {
    return this.live(chargerId).adapter.operator.reset(kind);
  }

  /**
   * Sends the change; when the charger takes it (Accepted, or Scheduled after its running
   * transaction) the intent is kept with `note` and re-sent whenever the charger boots.
   */
  async changeAvailability(
    chargerId: string,
    connectorId: string | null,
    operative: boolean,
    note: AvailabilityNote = { by: 'gateway', reason: null },
  ): Promise<ChargerReply> {
    const number = connectorId === null ? null : this.ocppNumber(chargerId, connectorId);
    const reply = await this.live(chargerId).adapter.operator.changeAvailability(number, operative);
    if (reply.status === 'Accepted' || reply.status === 'Scheduled') {
      this.holds.record({
        chargerId,
        connectorId: connectorId ?? WHOLE_CHARGER,
        operative,
        reason: note.reason,
        setBy: note.by,
        setAt: new Date(this.opts.clock.now()).toISOString(),
      });
    }
    return reply;
  }

  trigger(chargerId: string, connectorId: string | null, kind: TriggerKind): Promise<ChargerReply> {
    const number = connectorId === null ? null : this.ocppNumber(chargerId, connectorId);
    return this.live(chargerId).adapter.operator.trigger(number, kind);
  }

  readConfiguration(chargerId: string, keys: readonly string[]): Promise<ConfigurationReport> {
    return this.live(chargerId).adapter.operator.readConfiguration(keys);
  }

  changeConfiguration(chargerId: string, key: string, value: string): Promise<ChargerReply> {
    return this.live(chargerId).adapter.operator.changeConfiguration(key, value);
  }

  setBasicAuthPassword(chargerId: string, password: string): Promise<ChargerReply> {
    return this.live(chargerId).adapter.operator.setBasicAuthPassword(password);
  }

  updateFirmware(chargerId: string, request: FirmwareRequest): Promise<ChargerReply> {
    return this.live(chargerId).adapter.operator.updateFirmware(request);
  }

  requestLog(chargerId: string, request: LogRequest): Promise<LogReply> {
    return this.live(chargerId).adapter.operator.requestLog(request);
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

  /** The OCPP protocol a connected charger speaks, or undefined when it is offline. */
  protocolOf(chargerId: string): string | undefined {
    return this.connections.get(chargerId)?.protocol;
  }

  private ocppNumber(chargerId: string, connectorId: string): number {
    const connector = this.opts.site.connector(chargerId, connectorId);
    if (!connector) throw new Error(`connector ${connectorId} is not configured on ${chargerId}`);
    return connector.ocppConnectorId;
  }

  /** A booted charger's settings, then the operator's availability decisions told again. */
  private async afterBoot(chargerId: string): Promise<void> {
    if (!this.connections.has(chargerId)) return;
    const step = async (failed: string, run: () => Promise<unknown>) => {
      try {
        await run();
      } catch (err) {
        this.opts.log.warn({ chargerId, err: (err as Error).message }, failed);
      }
    };
    await step('charger configuration not applied', () => this.configure(chargerId));
    await step('operator availability not re-applied', () => this.reapplyAvailability(chargerId));
  }

  /** After a boot: the operator's availability decisions, told again (a reboot may lose them). */
  private async reapplyAvailability(chargerId: string): Promise<void> {
    for (const intent of this.holds.of(chargerId)) {
      if (!this.connections.has(chargerId)) return;
      const connectorId = intent.connectorId === WHOLE_CHARGER ? null : intent.connectorId;
      const number = connectorId === null ? null : this.ocppNumber(chargerId, connectorId);
      const reply = await this.live(chargerId).adapter.operator.changeAvailability(
        number,
        intent.operative,
      );
      this.eventLog.record(
        chargerId,
        'ChangeAvailability',
        `operator intent re-applied after boot: ${reply.status}`,
        { connectorId: intent.connectorId, operative: intent.operative },
      );
    }
  }

  private settings(): ChargerSettings {
    return {
      meterSampleIntervalSeconds: this.opts.meterSampleIntervalSeconds,
      connectionTimeoutSeconds: this.opts.connectionTimeoutSeconds,
    };
  }

  /** Ends a charger's connection (it was retired); admission refuses it when it comes back. */
  disconnect(chargerId: string, reason: string): boolean {
    const connection = this.connections.get(chargerId);
    if (!connection) return false;
    void connection.client.close({ code: 1000, reason });
    return true;
  }

  async close(): Promise<void> {
    for (const timer of this.pendingDelays) clearTimeout(timer);
    this.pendingDelays.clear();
    this.settingsReads.close();
    await this.server.close({ force: true });
    this.connections.clear();
    this.bookkeeping.flush();
  }

  private live(chargerId: string): Connection {
    const connection = this.connections.get(chargerId);
    if (!connection) throw new ChargerOfflineError(`charger ${chargerId} is not connected`);
    return connection;
  }

  private requireEvents(): ChargerEvents {
    if (!this.events) throw new Error('central system has no event sink');
    return this.events;
  }

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
    const reports = this.reportsFor(chargerId);
    const internalError = (method: string, err: unknown) =>
      this.opts.log.error({ chargerId, method, err }, 'ocpp handler failed: InternalError sent');
    const adapter = adapt({
      chargerId,
      rpc: guardedConnection(
        edgeConnection(
          observedConnection(servingConnection(client), protocol, this.observerFor(chargerId)),
          protocol,
          normalizer,
          {
            deviation: reports.deviation,
            notUnderstood: (method, problem, payload) =>
              reports.noted(method, `not understood: ${problem}`, payload),
            ourMistake: internalError,
          },
        ),
        internalError,
      ),
      db: this.opts.db,
      site: this.opts.site,
      clock: this.opts.clock,
      log: this.opts.log,
      events: () => this.requireEvents(),
      reports,
      clocks: this.clocks,
      heartbeatIntervalSeconds: this.opts.heartbeatIntervalSeconds,
      callTimeoutMs: this.opts.callTimeoutMs,
    });
    const connection: Connection = { client, adapter, protocol };
    this.connections.set(chargerId, connection);
    this.touch(chargerId, protocol);
    this.opts.log.info(
      { chargerId, protocol: raw.protocol ?? `none offered, taken as ${protocol}` },
      'charger connected',
    );
    this.limitMessageRate(raw, client);
    raw.on('close', () => {
      if (this.connections.get(chargerId) === connection) {
        this.connections.delete(chargerId);
        this.settingsReads.forget(chargerId);
        this.opts.log.info({ chargerId }, 'charger disconnected');
        this.opts.onChargerOffline?.(chargerId);
      }
    });
    this.clocks.connected(chargerId);
    this.requireEvents().chargerOnline(chargerId);
  }

  /**
   * A charger flooding us is disconnected (1008) rather than answered with CALLERRORs: answering
   * would cost as much as the flood itself, and a real charger reconnects and resumes calmly.
   * A charger replaying its offline queue is not a flood, however fast: transaction messages
   * (REPLAYED_ACTIONS) sent one at a time, each after the answer to the one before, do not count
   * against the rate. What is bounded for them is what is outstanding (REPLAY_OUTSTANDING): sent
   * faster than we answer, they count like any other message.
   */
  private limitMessageRate(raw: ClientLike, client: Connection['client']): void {
    const bucket = new TokenBucket(
      this.opts.messageRate.burst,
      this.opts.messageRate.perSecond,
      this.opts.clock,
    );
    let closing = false;
    let outstanding = 0;
    raw.on('message', ({ message, outbound }) => {
      const frame = frameOf(message);
      if (outbound) {
        if (frame.type === 3 || frame.type === 4) outstanding = Math.max(0, outstanding - 1);
        return;
      }
      if (frame.type === 2) outstanding++;
      if (closing) return;
      const replay =
        frame.type === 2 && REPLAYED_ACTIONS.has(frame.action) && outstanding <= REPLAY_OUTSTANDING;
      if (replay || bucket.take() === 0) return;
      closing = true;
      this.opts.log.warn(
        { chargerId: raw.identity },
        'charger exceeded the message rate: connection closed',
      );
      void client.close({ code: 1008, reason: 'message rate exceeded' });
    });
  }

  private touch(chargerId: string, protocol: string): void {
    const at = new Date(this.opts.clock.now()).toISOString();
    this.soon(() => this.statements().touch.run(chargerId, protocol, at), 'last seen');
  }

  private soon(write: () => unknown, what: string): void {
    this.bookkeeping.add(write, what);
  }

  private reportsFor(chargerId: string): ChargerReports {
    return {
      booted: (info) => {
        this.recordBoot(chargerId, info);
        this.clocks.booted(chargerId);
        this.requireEvents().chargerBooted(chargerId);
        // After the boot reply has gone out: a charger takes no calls before it is accepted.
        setTimeout(() => this.settingsReads.booted(chargerId, () => this.afterBoot(chargerId)), 0);
      },
      status: (connectorId, status, errorCode, transactionless) => {
        this.connectorState.setStatus(chargerId, connectorId, status, errorCode);
        if (connectorId !== WHOLE_CHARGER)
          this.requireEvents().connectorStatus(chargerId, connectorId, status, transactionless);
      },
      statusOf: (connectorId) => this.connectorState.get(chargerId, connectorId).status,
      vehicle: (connectorId, info, at) =>
        this.connectorState.setVehicle(chargerId, connectorId, info, at),
      noted: (action, note, payload) => this.eventLog.record(chargerId, action, note, payload),
      deviation: (kind, example) => {
        this.deviations.record(chargerId, kind, example);
        this.opts.onDeviation?.(chargerId, kind);
      },
      transfer: (status) => this.opts.onTransferStatus?.(chargerId, status),
      metering: (measurands) => {
        if (this.metering.record(chargerId, measurands)) {
          this.eventLog.record(chargerId, 'configure', `meters: ${measurands.join(',') || 'none'}`);
        }
      },
    };
  }

  private recordBoot(chargerId: string, info: BootInfo): void {
    const at = new Date(this.opts.clock.now()).toISOString();
    this.soon(
      () =>
        this.statements().boot.run(
          info.vendor,
          info.model,
          info.serialNumber,
          info.firmwareVersion,
          at,
          at,
          chargerId,
        ),
      'boot',
    );
    this.opts.log.info({ chargerId, vendor: info.vendor, model: info.model }, 'charger booted');
  }

  /** Prepared once, at first use (the charger_info table exists once the database is migrated). */
  private statements(): { touch: Statement; boot: Statement } {
    this.prepared ??= {
      touch: this.opts.db.prepare(
        `INSERT INTO charger_info (charger_id, protocol, last_seen_at) VALUES (?, ?, ?)
         ON CONFLICT (charger_id) DO UPDATE SET protocol = excluded.protocol, last_seen_at = excluded.last_seen_at`,
      ),
      boot: this.opts.db.prepare(
        `UPDATE charger_info SET vendor = ?, model = ?, serial_number = ?, firmware_version = ?,
           booted_at = ?, last_seen_at = ? WHERE charger_id = ?`,
      ),
    };
    return this.prepared;
  }
}

/** What the central system reads of an ocpp-rpc server-side client. */
interface ClientLike {
  identity: string;
  protocol: string | undefined;
  on(event: 'close', listener: () => void): void;
  on(event: 'message', listener: (event: { message: unknown; outbound: boolean }) => void): void;
}

function decodableIdentity(path: string): boolean {
  try {
    decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
    return true;
  } catch {
    return false;
  }
}

/** What a charger queues while offline and replays on reconnect (1.6 and 2.0.1). */
const REPLAYED_ACTIONS = new Set([
  'StartTransaction',
  'StopTransaction',
  'MeterValues',
  'TransactionEvent',
  'StatusNotification',
]);
/** Unanswered calls a replay may have open: one, as OCPP-J asks, plus a retry in flight. */
const REPLAY_OUTSTANDING = 2;

/** The message type and (for a call) its action, read from the frame's head without parsing it all. */
function frameOf(message: unknown): { type: number; action: string } {
  const text = typeof message === 'string' ? message : String(message);
  const head = /^\s*\[\s*([2-4])\s*,\s*"(?:[^"\\]|\\.)*"\s*(?:,\s*"([A-Za-z]+)")?/.exec(text);
  return { type: head ? Number(head[1]) : 0, action: head?.[2] ?? '' };
}
