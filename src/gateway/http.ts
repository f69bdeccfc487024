import type { Server as HttpsServer } from 'node:https';
import type { FastifyInstance } from 'fastify';
import type { AlertStore } from '../alerts/alert-store.js';
import { buildApi } from '../api/app.js';
import { openApiDocument, serveOpenApi } from '../api/openapi.js';
import { ConsoleLogins } from '../auth/console-logins.js';
import { DriverTokens } from '../auth/driver-tokens.js';
import { OperatorCredentials } from '../auth/operator-credentials.js';
import type { Charging } from '../charging/charging.js';
import type { Drain } from '../charging/drain.js';
import type { SessionLifecycle } from '../charging/lifecycle.js';
import type { ChargerRegistry } from '../config/charger-registry.js';
import type { SiteDirectory } from '../config/site.js';
import type { TariffBook } from '../config/tariff-book.js';
import { registerConsole } from '../console/console.js';
import type { ConsoleEventHub } from '../console/event-hub.js';
import { EVENT_STREAM_DEFAULTS, eventStreamRoutes } from '../console/events-route.js';
import { DEFAULT_BUNDLE_DIR } from '../console/static-routes.js';
import type { GatewayMetrics } from '../metrics/metrics.js';
import { registerMetricsRoute } from '../metrics/route.js';
import { AuthThrottle } from '../ocpp/connection/auth-throttle.js';
import type { CentralSystem } from '../ocpp/central-system.js';
import { alertRoutes } from '../operator/routes/alerts.js';
import { buildOperatorServer, registerOperatorApi, type OperatorDeps } from '../operator/api.js';
import { AuditTrail } from '../operator/audit.js';
import { ChargerActions } from '../operator/charger-actions.js';
import type { LiveMeters } from '../operator/live-meters.js';
import { operatorRouteModules } from '../operator/modules.js';
import { SiteReadModel } from '../operator/read-model/site.js';
import type { RecentCalls } from '../operator/recent-calls.js';
import { OperatorRequests } from '../operator/requests.js';
import type { PowerLimits } from '../power/limit-sources.js';
import type { LoadManager } from '../power/load-manager.js';
import { packageVersion } from '../shared/package-version.js';
import { readTlsFiles } from '../shared/tls-files.js';
import { registerTransferRoutes } from '../operator/routes/transfer-files.js';
import type { Transfers } from '../transfers/transfers.js';
import type { RunningUplink } from '../uplink/start.js';
import type { Records } from './records.js';
import type { Basics } from './store.js';

/**
 * The listeners the readiness check asks about: set as each is made (the HTTP one right after its
 * routes, the chargers' TLS one once it listens), so the check never reads one before.
 */
export class Listeners {
  api: FastifyInstance | undefined;
  ocppTls: HttpsServer | undefined;

  constructor(private readonly ocppTlsConfigured: boolean) {}

  /** A listener that should be listening and is not. */
  down(): boolean {
    return !this.api?.server.listening || (this.ocppTlsConfigured && !this.ocppTls?.listening);
  }
}

export interface HttpDeps extends Basics {
  site: SiteDirectory;
  tariffs: TariffBook;
  chargerRegistry: ChargerRegistry;
  records: Records;
  uplink: RunningUplink;
  central: CentralSystem;
  metrics: GatewayMetrics;
  consoleEvents: ConsoleEventHub;
  recentCalls: RecentCalls;
  alertStore: AlertStore;
  powerLimits: PowerLimits | undefined;
  load: LoadManager | undefined;
  live: LiveMeters;
  lifecycle: SessionLifecycle;
  charging: Charging;
  drain: Drain;
  transfers: Transfers;
  listeners: Listeners;
  consoleBundleDir: string | undefined;
}

/**
 * The driver API and the operator API (on the driver API's listener, or on its own with
 * operator.http), the console, /metrics and the OpenAPI document: every route, none listening yet.
 */
export function buildHttp(d: HttpDeps): {
  api: FastifyInstance;
  operatorApi: FastifyInstance | undefined;
} {
  const { config, db, clock, log, central, records, drain, listeners } = d;
  const { outbox, storage } = records;
  const health = () => ({
    chargersOnline: central.onlineCount(),
    outboxDepth: outbox.depth(),
    uplink: d.uplink.health(),
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
    apiKeys: records.apiKeys,
    driverTokens: new DriverTokens(db, clock, config.tokens.driverTokenTtlSeconds),
    roster: records.roster,
    charging: d.charging,
    sessionViews: records.sessionViews,
    quotePower: (chargerId, connectorId, energyWh) =>
      d.load?.powerIfStarted(chargerId, connectorId, energyWh) ?? null,
    sessionPower: (sessionId) => {
      const power = d.load?.sessionPower(sessionId);
      return power ? { allocatedKw: power.allocatedW / 1000, waiting: power.waiting } : null;
    },
    liveness,
    readiness: () => {
      const problems: string[] = [];
      const written = records.writeProbe.check(clock.now());
      if (written) problems.push(written);
      if (listeners.down()) problems.push('the HTTP/OCPP listener is not listening');
      if (drain.draining) problems.push('the gateway is draining for a stop');
      return problems;
    },
  });
  listeners.api = api;
  const operatorDeps: OperatorDeps = {
    db,
    clock,
    log: log.child({ component: 'operator' }),
    operators: new OperatorCredentials(db),
    consoleLogins: new ConsoleLogins(db),
    audit: new AuditTrail(db),
    roster: records.roster,
    wallet: records.wallet,
    fleetChanges: records.fleetChanges,
    tokenChanges: records.tokenChanges,
    requests: new OperatorRequests(db),
    apiKeys: records.apiKeys,
    chargers: central.calls,
    chargerActions: new ChargerActions({
      site: d.site,
      chargers: central.operatorCalls,
      lifecycle: d.lifecycle,
      writableConfig: config.chargerOperations.writableConfig,
    }),
    site: d.site,
    tariffs: d.tariffs,
    chargerRegistry: d.chargerRegistry,
    transfers: d.transfers,
    disconnect: (chargerId, reason) => central.disconnect(chargerId, reason),
    live: d.live,
    calls: d.recentCalls,
    read: new SiteReadModel(db),
    powerLimits: d.powerLimits,
    load: d.load && config.power ? { manager: d.load, policy: config.power.policy } : undefined,
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
    eventStreamRoutes(d.consoleEvents, { ...EVENT_STREAM_DEFAULTS, tls: operatorTls }),
    alertRoutes(d.alertStore),
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
    logins: operatorDeps.consoleLogins,
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
    bundleDir: d.consoleBundleDir ?? DEFAULT_BUNDLE_DIR,
  });
  // The scraper reaches /metrics where operators reach their API (the site LAN, if configured).
  d.metrics.observeHttp(api);
  if (operatorApi) d.metrics.observeHttp(operatorApi);
  if (config.metrics.bearerTokenSha256) {
    registerMetricsRoute(operatorApi ?? api, d.metrics, config.metrics.bearerTokenSha256);
  }
  registerTransferRoutes(operatorApi ?? api, d.transfers, config.transfers.maxLogBytes);
  const document = () => openApiDocument(api, operatorApi);
  serveOpenApi(api, document);
  if (operatorApi) serveOpenApi(operatorApi, document);
  return { api, operatorApi };
}
