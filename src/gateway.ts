import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { AlertStore } from './alerts/alert-store.js';
import { startAlerts, type RunningAlerts } from './alerts/start.js';
import { buildApi } from './api/app.js';
import { refuseUpgrade } from './api/edge-answers.js';
import { openApiDocument, serveOpenApi } from './api/openapi.js';
import { securityHeaders } from './api/security-headers.js';
import { ApiKeys } from './auth/api-keys.js';
import { DriverTokens } from './auth/driver-tokens.js';
import { Charging } from './charging/charging.js';
import {
  Drain,
  type DrainResult,
  type DrainStatus,
  type OpenSessionSummary,
} from './charging/drain.js';
import { IdempotencyKeys } from './charging/idempotency.js';
import { ChargerEventDispatcher } from './charging/charger-event-dispatcher.js';
import { SessionLifecycle } from './charging/lifecycle.js';
import { scaledAllowance } from './charging/power-allowance.js';
import { SessionOutcomes } from './charging/outcomes.js';
import { SessionStore } from './charging/session-store.js';
import { SessionViews } from './charging/session-view.js';
import type { GatewayConfig } from './config/schema.js';
import { ChargerRegistry } from './config/charger-registry.js';
import { SiteDirectory } from './config/site.js';
import { TariffBook } from './config/tariff-book.js';
import { FleetAdmin } from './fleet/admin.js';
import { Roster } from './fleet/roster.js';
import { OperatorCredentials } from './auth/operator-credentials.js';
import { buildOperatorServer, registerOperatorApi, type OperatorDeps } from './operator/api.js';
import { AuditTrail } from './operator/audit.js';
import { ChargerActions } from './operator/charger-actions.js';
import { LiveMeters } from './operator/live-meters.js';
import { RecentCalls } from './operator/recent-calls.js';
import { ConsoleSessions } from './auth/console-sessions.js';
import { registerConsole } from './console/console.js';
import { ConsoleEventHub } from './console/event-hub.js';
import { EVENT_STREAM_DEFAULTS, eventStreamRoutes } from './console/events-route.js';
import { consoleFeed, tailOutbox } from './console/gateway-feed.js';
import { DEFAULT_BUNDLE_DIR } from './console/static-routes.js';
import { AuthThrottle } from './ocpp/auth-throttle.js';
import { SiteReadModel } from './operator/read-model.js';
import { OperatorRequests } from './operator/requests.js';
import { operatorRouteModules } from './operator/modules.js';
import { alertRoutes } from './operator/alert-routes.js';
import { Telematics } from './fleet/telematics.js';
import { registerFeedMetrics, startLimitSources } from './power/limit-sources.js';
import { PowerListener } from './power/power-listener.js';
import { startLoadManagement } from './power/start.js';
import { GatewayMetrics } from './metrics/metrics.js';
import { registerMetricsRoute } from './metrics/route.js';
import { CentralSystem } from './ocpp/central-system.js';
import type { SettingsPacingOptions } from './ocpp/settings-pacing.js';
import type { ChargerCommands } from './ocpp/port.js';
import { systemClock, type Clock } from './shared/clock.js';
import { armedKillPoint } from './shared/kill-points.js';
import { createLogger, type Logger } from './shared/log.js';
import { readTlsFiles } from './shared/tls-files.js';
import { serverTlsOptions } from './shared/tls-server.js';
import { packageVersion } from './shared/package-version.js';
import { releaseRelaxed } from './store/durability.js';
import { closeGroupCommit } from './store/group-commit.js';
import { openDatabase, type Db } from './store/database.js';
import { acquireGatewayLock, type GatewayLock } from './store/gateway-lock.js';
import { Outbox } from './store/outbox.js';
import { Retention } from './store/retention.js';
import { StorageHealth } from './store/storage-health.js';
import { WriteProbe } from './store/write-probe.js';
import { registerTransferRoutes } from './transfers/charger-routes.js';
import { FileArea } from './transfers/file-area.js';
import { TransferStore } from './transfers/transfer-store.js';
import { Transfers } from './transfers/transfers.js';
import { startUplink } from './uplink/start.js';
import { Wallet } from './wallet/wallet.js';

export interface GatewayOptions {
  clock?: Clock;
  log?: Logger;
  /** The browser console's bundle; default dist/console-web of this installation. */
  consoleBundleDir?: string;
  /** When booted chargers' settings are read; default SETTINGS_PACING (tests widen its waits). */
  settingsPacing?: SettingsPacingOptions;
}

export interface RunningGateway {
  /** http://host:port (https:// with http.tls) */
  url: string;
  /** ws://host:port/<ocpp path> (wss:// with http.tls); chargers append /<chargePointId> */
  ocppUrl: string;
  /** wss://host:port/<ocpp path> of the chargers' TLS listener (ocpp.tls), if configured */
  ocppTlsUrl: string | undefined;
  port: number;
  /** http://host:port of the operator API (the driver API's URL unless operator.http is set) */
  operatorUrl: string;
  db: Db;
  api: FastifyInstance;
  /** The console's live events (GET /admin/v1/events listens to it). */
  consoleEvents: ConsoleEventHub;
  /** The version-neutral charger port (the commands the charging and load layers send). */
  chargers: ChargerCommands;
  /** Outbox backlog and database size, for health and metrics. */
  storage: StorageHealth;
  /**
   * Refuses new Starts (503 gateway_draining) and resolves when no session is open or after
   * `timeoutSeconds` (default shutdown.drainTimeoutSeconds, or 600 when that is 0). The gateway
   * keeps running: call close() after it. A second call joins the first.
   */
  drain(options?: { timeoutSeconds?: number }): Promise<DrainResult>;
  /** Drain state and the open sessions. */
  drainStatus(): DrainStatus;
  /** Ends a drain's wait now (a second stop signal). */
  interruptDrain(): void;
  /** Stops; sessions still open are logged and resume on restart. */
  close(): Promise<void>;
}

/** Drain timeout of drain() when shutdown.drainTimeoutSeconds is 0 (SIGTERM then stops at once). */
const DEFAULT_DRAIN_SECONDS = 600;
const DRAIN_POLL_MS = 1000;

/** The composition root: builds every part from the config and starts listening. */
export async function startGateway(
  config: GatewayConfig,
  options: GatewayOptions = {},
): Promise<RunningGateway> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.log.level);
  const lock = lockDatabase(config.database.path, clock);
  let db: Db;
  try {
    db = openDatabase(config.database.path);
  } catch (err) {
    lock?.release();
    throw err;
  }
  const tariffs = new TariffBook(db, config.site.timeZone, config.pricing.tariffSource);
  const { differs } = tariffs.seed(config.tariffs, new Date(clock.now()).toISOString());
  if (differs.length > 0)
    log.warn(
      { tariffIds: differs },
      'tariffs in the config file differ from the database, which holds the prices (pricing.tariffSource: database)',
    );
  const site = new SiteDirectory(config, tariffs);
  const chargerRegistry = new ChargerRegistry(db, site);
  const retiredInConfig = chargerRegistry.syncFromConfig(config.chargers, clock.now());
  if (retiredInConfig.length > 0)
    log.warn({ chargerIds: retiredInConfig }, 'chargers in the config file were retired: refused');
  const outbox = new Outbox(db);
  const alertStore = new AlertStore(
    db,
    outbox,
    config.siteId,
    config.alerts?.webhook !== undefined,
  );
  const wallet = new Wallet(db, outbox);
  const roster = new Roster(db);
  const admin = new FleetAdmin(roster, wallet);
  const sessions = new SessionStore(db);
  const sessionViews = new SessionViews(db);
  const outcomes = new SessionOutcomes(db, sessions, wallet, outbox);
  const apiKeys = new ApiKeys(db, clock);
  const telematics = new Telematics(db);
  const powerLimits = startLimitSources({ config, db, clock, log });
  const uplink = startUplink({
    config,
    db,
    clock,
    log,
    outbox,
    roster,
    admin,
    apiKeys,
    telematics,
    feeds: powerLimits?.feed ? [powerLimits.feed] : [],
  });

  const metrics: GatewayMetrics = new GatewayMetrics({
    db,
    site,
    // Read at scrape time only, when the central system below exists.
    chargers: {
      onlineByProtocol: () => central.onlineByProtocol(),
      connector: (chargerId, connectorId) => central.connector(chargerId, connectorId),
    },
    storage: {
      outboxHealth: () => storage.outboxHealth(),
      databaseSizeBytes: () => storage.databaseSizeBytes(),
    },
  });
  const consoleEvents = new ConsoleEventHub();
  alertStore.onEvent((e) =>
    consoleEvents.publish(e.type, { kind: e.alert.kind, subject: e.alert.subject }),
  );
  const recentCalls = new RecentCalls();
  metrics.observeConsole(() => consoleEvents.clients);
  metrics.observeAlerts(
    () => alertStore.open(),
    () => alertStore.undelivered(),
  );
  const central: CentralSystem = new CentralSystem({
    db,
    site,
    clock,
    log: log.child({ component: 'ocpp' }),
    path: config.ocpp.path,
    heartbeatIntervalSeconds: config.ocpp.heartbeatIntervalSeconds,
    meterSampleIntervalSeconds: config.ocpp.meterSampleIntervalSeconds,
    // The charger gives up on the EV before the gateway refunds: a margin of 20% of the start
    // timeout (24 s at the default 120 s), so an EV plugged in after the refund cannot start.
    connectionTimeoutSeconds: Math.max(1, Math.floor(config.sessions.startTimeoutSeconds * 0.8)),
    callTimeoutMs: config.ocpp.callTimeoutSeconds * 1000,
    maxFrameBytes: config.ocpp.maxFrameBytes,
    pingIntervalMs: config.ocpp.pingIntervalSeconds * 1000,
    messageRate: config.ocpp.messageRate,
    authFailureDelay: {
      initialMs: config.ocpp.authFailureDelay.initialMilliseconds,
      maxMs: config.ocpp.authFailureDelay.maxMilliseconds,
    },
    onConnectorChange: (view) => uplink.connectorChanged(view),
    observer: metrics,
    onChargerOffline: (chargerId) => consoleEvents.publish('charger.offline', { chargerId }),
    onDeviation: (chargerId, kind) => consoleEvents.publish('deviation', { chargerId, kind }),
    onCall: (chargerId, call) => recentCalls.record(chargerId, call, clock.now()),
    onCredentialUsed: (chargerId, credential) =>
      chargerRegistry.credentialUsed(chargerId, credential, clock.now()),
    onTransferStatus: (chargerId, status) => transfers.statusReported(chargerId, status),
    ...(options.settingsPacing ? { settingsPacing: options.settingsPacing } : {}),
  });
  if (powerLimits?.feed) registerFeedMetrics(metrics.registry, powerLimits.feed);
  const live = new LiveMeters();
  const load = powerLimits
    ? startLoadManagement({
        config,
        site,
        sessions,
        chargers: central,
        log,
        clock,
        limits: powerLimits.board,
        nodeIds: powerLimits.board.nodeIds,
        registry: metrics.registry,
      })
    : undefined;
  const lifecycle = new SessionLifecycle({
    db,
    clock,
    log: log.child({ component: 'sessions' }),
    sessions,
    outcomes,
    chargers: central,
    startTimeoutMs: config.sessions.startTimeoutSeconds * 1000,
    stopLeadMs: config.sessions.stopLeadMilliseconds,
    stopRetryMs: config.sessions.stopRetrySeconds * 1000,
    stopVerifyMs: config.sessions.stopVerifySeconds * 1000,
    // The interval every charger is asked for (its configure step).
    sampleIntervalMs: () => config.ocpp.meterSampleIntervalSeconds * 1000,
    recoveryWaitMs: config.sessions.recoveryWaitSeconds * 1000,
    stopGraceMs: config.sessions.stopGraceSeconds * 1000,
    silenceMs: config.sessions.settleAfterSilenceSeconds * 1000,
    // A session's connector is configured (Charging checks it); a removed one is not bounded.
    maxPowerW: (chargerId, connectorId) =>
      site.connector(chargerId, connectorId)?.maxPowerW ?? Number.POSITIVE_INFINITY,
    ...(load ? { allowance: scaledAllowance(load, config.simulation.timeFactor) } : {}),
  });
  central.setEvents(
    new ChargerEventDispatcher(lifecycle, [
      live,
      ...(load ? [new PowerListener(load)] : []),
      consoleFeed(consoleEvents, db),
    ]),
  );
  tailOutbox(outbox, db, consoleEvents);
  const charging = new Charging({
    db,
    clock,
    log: log.child({ component: 'charging' }),
    site,
    tariffs,
    wallet,
    sessions,
    idempotency: new IdempotencyKeys(db),
    outcomes,
    lifecycle,
    chargers: central,
    settings: {
      maxAmount: config.sessions.maxAmount,
      efficiencyPercent: config.pricing.chargingEfficiencyPercent,
      defaultVehicle: {
        model: config.pricing.defaultVehicle.model,
        batteryWh: Math.round(config.pricing.defaultVehicle.batteryKwh * 1000),
      },
      telematicsMaxAgeMs: config.uplink.telematicsMaxAgeMinutes * 60_000,
    },
  });

  const storage: StorageHealth = new StorageHealth(db, outbox, () => clock.now(), {
    warnDepth: config.uplink.outbox.warnDepth,
    errorDepth: config.uplink.outbox.errorDepth,
    warnAgeMs: config.uplink.outbox.warnAgeMinutes * 60_000,
    errorAgeMs: config.uplink.outbox.errorAgeMinutes * 60_000,
  });
  const retention = new Retention({
    db,
    clock,
    log: log.child({ component: 'retention' }),
    windows: config.retention,
    batchRows: config.retention.batchRows,
    intervalMs: config.retention.intervalMinutes * 60_000,
  });
  const drain = new Drain({
    sessions,
    charging,
    clock,
    log: log.child({ component: 'drain' }),
    pollMs: DRAIN_POLL_MS,
  });
  // Chargers are given the operator listener's address once it listens, unless configured.
  let transferBaseUrl = config.transfers.baseUrl ?? '';
  const transfers: Transfers = new Transfers({
    store: new TransferStore(db),
    area: new FileArea(transferDirectory(config)),
    clock,
    log: log.child({ component: 'transfers' }),
    site,
    chargers: central,
    openSessions: (chargerId) => sessions.openOnCharger(chargerId).map((s) => s.id),
    baseUrl: () => transferBaseUrl,
    settings: config.transfers,
  });
  const writeProbe = new WriteProbe(db);
  let ocppTls: HttpsServer | undefined;

  const killAt = armedKillPoint();
  if (killAt) log.warn({ killAt }, 'crash test: this process kills itself at a kill point');
  lifecycle.recover();

  const health = () => ({
    chargersOnline: central.onlineCount(),
    outboxDepth: outbox.depth(),
    uplink: uplink.health(),
    outbox: storage.outboxHealth(),
    database: storage.databaseSize(),
    drain: drain.status(),
  });
  const version = packageVersion();
  // Degraded: it answers, but the outbox alarm is at error (the cloud has taken nothing for hours).
  const liveness = () =>
    ({
      status: storage.outboxHealth().level === 'error' ? 'degraded' : 'ok',
      version,
    }) as const;
  const api = buildApi({
    log,
    clock,
    tls: config.http.tls ? readTlsFiles(config.http.tls, 'http.tls') : undefined,
    rateLimits: config.http.rateLimits,
    bodyLimitBytes: config.http.bodyLimitBytes,
    maxAmount: config.sessions.maxAmount,
    apiKeys,
    driverTokens: new DriverTokens(db, clock, config.tokens.driverTokenTtlSeconds),
    roster,
    charging,
    sessionViews,
    quotePower: (chargerId, connectorId, energyWh) =>
      load?.powerIfStarted(chargerId, connectorId, energyWh) ?? null,
    sessionPower: (sessionId) => {
      const power = load?.sessionPower(sessionId);
      return power ? { allocatedKw: power.allocatedW / 1000, waiting: power.waiting } : null;
    },
    liveness,
    readiness: () => {
      const problems: string[] = [];
      const written = writeProbe.check(clock.now());
      if (written) problems.push(written);
      if (!api.server.listening || (config.ocpp.tls && !ocppTls?.listening)) {
        problems.push('the HTTP/OCPP listener is not listening');
      }
      if (drain.draining) problems.push('the gateway is draining for a stop');
      return problems;
    },
  });
  const operatorDeps: OperatorDeps = {
    db,
    clock,
    log: log.child({ component: 'operator' }),
    operators: new OperatorCredentials(db),
    consoleSessions: new ConsoleSessions(db),
    audit: new AuditTrail(db),
    roster,
    wallet,
    admin,
    requests: new OperatorRequests(db),
    apiKeys,
    chargers: central,
    chargerActions: new ChargerActions({
      site,
      chargers: central,
      lifecycle,
      writableConfig: config.chargerOperations.writableConfig,
    }),
    site,
    tariffs,
    chargerRegistry,
    transfers,
    disconnect: (chargerId, reason) => central.disconnect(chargerId, reason),
    live,
    calls: recentCalls,
    read: new SiteReadModel(db),
    powerLimits,
    load: load && config.power ? { manager: load, policy: config.power.policy } : undefined,
    settings: {
      siteId: config.siteId,
      timeZone: config.site.timeZone,
      maxAmount: config.sessions.maxAmount,
      apiKeyOverlapHours: config.tokens.apiKeyOverlapHours,
      chargerTls: {
        tls: config.ocpp.tls !== undefined || config.http.tls !== undefined,
        clientCa: config.ocpp.tls?.ca !== undefined,
      },
    },
    health: () => ({ ...liveness(), ...health() }),
  };
  const operatorHttp = config.operator.http;
  const operatorTls = operatorHttp ? operatorHttp.tls !== undefined : config.http.tls !== undefined;
  const operatorModules = [
    ...operatorRouteModules,
    eventStreamRoutes(consoleEvents, { ...EVENT_STREAM_DEFAULTS, tls: operatorTls }),
    alertRoutes(alertStore),
  ];
  const operatorApi = operatorHttp
    ? buildOperatorServer(operatorDeps, operatorModules, {
        tls: operatorHttp.tls ? readTlsFiles(operatorHttp.tls, 'operator.http.tls') : undefined,
        bodyLimitBytes: config.http.bodyLimitBytes,
      })
    : undefined;
  if (!operatorApi) registerOperatorApi(api, operatorDeps, operatorModules);
  registerConsole(operatorApi ?? api, {
    operators: operatorDeps.operators,
    sessions: operatorDeps.consoleSessions,
    audit: operatorDeps.audit,
    clock,
    throttle: new AuthThrottle({
      initialMs: config.ocpp.authFailureDelay.initialMilliseconds,
      maxMs: config.ocpp.authFailureDelay.maxMilliseconds,
      clock,
    }),
    sessionHours: config.console.sessionHours,
    tls: operatorTls,
    timeZone: config.site.timeZone,
    bundleDir: options.consoleBundleDir ?? DEFAULT_BUNDLE_DIR,
  });
  // The scraper reaches /metrics where operators reach their API (the site LAN, if configured).
  metrics.observeHttp(api);
  if (operatorApi) metrics.observeHttp(operatorApi);
  if (config.metrics.bearerTokenSha256) {
    registerMetricsRoute(operatorApi ?? api, metrics, config.metrics.bearerTokenSha256);
  }
  registerTransferRoutes(operatorApi ?? api, transfers, config.transfers.maxLogBytes);
  const document = () => openApiDocument(api, operatorApi);
  serveOpenApi(api, document);
  if (operatorApi) serveOpenApi(operatorApi, document);

  central.attach(api.server, refuseUpgrade(securityHeaders(config.http.tls !== undefined)));
  await api.listen({ host: config.http.host, port: config.http.port });
  const address = api.server.address() as AddressInfo;
  const host = hostOf(address);
  const secure = config.http.tls !== undefined;
  log.info(
    { siteId: config.siteId, host: address.address, port: address.port, tls: secure },
    'gateway listening',
  );
  let operatorUrl = `${secure ? 'https' : 'http'}://${host}:${address.port}`;
  if (operatorApi && operatorHttp) {
    await operatorApi.listen({ host: operatorHttp.host, port: operatorHttp.port });
    const opAddress = operatorApi.server.address() as AddressInfo;
    operatorUrl = `${operatorHttp.tls ? 'https' : 'http'}://${hostOf(opAddress)}:${opAddress.port}`;
    log.info({ host: opAddress.address, port: opAddress.port }, 'operator api listening');
  }
  if (config.transfers.baseUrl === undefined) transferBaseUrl = operatorUrl;
  let ocppTlsUrl: string | undefined;
  if (config.ocpp.tls) {
    const tlsConfig = config.ocpp.tls;
    ocppTls = await listenOcppTls(tlsConfig, config.http.host);
    central.attach(ocppTls);
    const tlsAddress = ocppTls.address() as AddressInfo;
    ocppTlsUrl = `wss://${hostOf(tlsAddress)}:${tlsAddress.port}${config.ocpp.path}`;
    log.info(
      { host: tlsAddress.address, port: tlsAddress.port, clientCertificates: !!tlsConfig.ca },
      'ocpp tls listener',
    );
  }

  retention.start();
  const alerts: RunningAlerts | undefined = config.alerts
    ? startAlerts({
        config,
        alerts: config.alerts,
        db,
        store: alertStore,
        clock,
        log,
        chargers: {
          chargers: () =>
            site.all().map((c) => ({ id: c.id, connectorIds: [...c.connectors.keys()] })),
          isOnline: (chargerId) => central.isOnline(chargerId),
          connector: (chargerId, connectorId) => central.connector(chargerId, connectorId),
        },
        outboxBacklog: () => storage.outboxHealth(),
      })
    : undefined;

  let closed = false;
  return {
    url: `${secure ? 'https' : 'http'}://${host}:${address.port}`,
    ocppUrl: `${secure ? 'wss' : 'ws'}://${host}:${address.port}${config.ocpp.path}`,
    ocppTlsUrl,
    port: address.port,
    operatorUrl,
    db,
    api,
    consoleEvents,
    chargers: central,
    storage,
    drain: (o = {}) =>
      drain.drain(
        (o.timeoutSeconds ?? (config.shutdown.drainTimeoutSeconds || DEFAULT_DRAIN_SECONDS)) * 1000,
      ),
    drainStatus: () => drain.status(),
    interruptDrain: () => drain.interrupt(),
    async close() {
      if (closed) return;
      closed = true;
      drain.interrupt();
      retention.stop();
      alerts?.close();
      try {
        logOpenSessions(log, drain.openSessions());
      } catch (err) {
        // The database failed under the gateway: stopping matters more than the list.
        log.error({ err: (err as Error).message }, 'stopping: open sessions could not be listed');
      }
      lifecycle.close();
      load?.close();
      powerLimits?.board.close();
      await central.close();
      if (ocppTls) {
        ocppTls.closeAllConnections();
        await new Promise((resolve) => ocppTls?.close(resolve));
      }
      await api.close();
      await operatorApi?.close();
      await uplink.close();
      log.info(closeGroupCommit(db), 'group commit: batches and the writes they held');
      releaseRelaxed(db);
      db.close();
      lock?.release();
      log.info('gateway stopped');
    },
  };
}

/** Where firmware and logs are kept: configured, else `files` beside the database. */
function transferDirectory(config: GatewayConfig): string {
  if (config.transfers.directory !== undefined) return config.transfers.directory;
  if (config.database.path === ':memory:')
    return join(tmpdir(), `fleet-gateway-files-${process.pid}`);
  return join(dirname(config.database.path), 'files');
}

/** One gateway per database file (an in-memory one is its own). */
function lockDatabase(path: string, clock: Clock): GatewayLock | undefined {
  if (path === ':memory:') return undefined;
  return acquireGatewayLock(path, new Date(clock.now()).toISOString());
}

/**
 * Chargers go on charging while the gateway is down: a stop says which sessions it leaves open,
 * so the operator knows what the next start picks up (recover(): their limits are watched again
 * and their stops and settlements happen then).
 */
function logOpenSessions(log: Logger, open: OpenSessionSummary[]): void {
  if (open.length === 0) return;
  log.warn(
    { openSessions: open },
    `stopping with ${open.length} open sessions: their chargers keep charging unwatched; ` +
      'the sessions resume (limit watch, stop, settlement) when the gateway starts again',
  );
}

function hostOf(address: AddressInfo): string {
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}

/**
 * The chargers' TLS listener (security profiles 2 and 3). With a CA it asks every charger for a
 * client certificate but lets those without one finish the handshake: the admission check decides
 * per charger (profile 2 needs none, profile 3 one for its own id). Plain HTTP requests get 404.
 */
async function listenOcppTls(
  tls: NonNullable<GatewayConfig['ocpp']['tls']>,
  defaultHost: string,
): Promise<HttpsServer> {
  const material = readTlsFiles(tls, 'ocpp.tls');
  const server = createHttpsServer(
    {
      ...serverTlsOptions(material),
      requestCert: material.ca !== undefined,
      rejectUnauthorized: false,
    },
    (_request, response) => {
      response.writeHead(404, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify({ error: { code: 'not_found', message: 'OCPP only' } }));
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(tls.port, tls.host ?? defaultHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
