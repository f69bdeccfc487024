// First: it must run before anything loads ocpp-rpc.
import './gateway/ocpp-validators.js';
import type { FastifyInstance } from 'fastify';
import { startAlerts, type RunningAlerts } from './alerts/start.js';
import type { DrainResult, DrainStatus, OpenSessionSummary } from './charging/drain.js';
import type { GatewayConfig } from './config/schema.js';
import type { ConsoleEventHub } from './console/event-hub.js';
import { buildChargers } from './gateway/chargers.js';
import { buildCharging, buildPower } from './gateway/charging.js';
import { buildHttp, Listeners } from './gateway/http.js';
import { listen } from './gateway/listen.js';
import { buildRecords, buildSite } from './gateway/records.js';
import { openStore } from './gateway/store.js';
import { buildTransfers } from './gateway/transfers.js';
import type { ChargerCommands } from './ocpp/port.js';
import type { SettingsPacingOptions } from './ocpp/charger-state/settings-pacing.js';
import { startLimitSources } from './power/limit-sources.js';
import { systemClock, type Clock } from './shared/clock.js';
import { armedKillPoint } from './shared/kill-points.js';
import { createLogger, type Logger } from './shared/log.js';
import type { Db } from './store/database.js';
import { releaseRelaxed } from './store/durability.js';
import { closeGroupCommit } from './store/group-commit.js';
import type { StorageHealth } from './store/storage-health.js';
import { startUplink } from './uplink/start.js';

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

/**
 * The composition root: builds every part from the config, each after the parts it uses (the
 * steps are in gateway/), and starts listening.
 */
export async function startGateway(
  config: GatewayConfig,
  options: GatewayOptions = {},
): Promise<RunningGateway> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.log.level);
  const { db, lock } = openStore(config, clock, log);
  const basics = { config, db, clock, log };
  const { tariffs, site, chargerRegistry } = buildSite(basics);
  const records = buildRecords(basics);
  const { outbox, alertStore, storage, sessions } = records;
  const powerLimits = startLimitSources(basics);
  const uplink = await startUplink({
    ...basics,
    outbox,
    roster: records.roster,
    fleetChanges: records.fleetChanges,
    tokenChanges: records.tokenChanges,
    apiKeys: records.apiKeys,
    telematics: records.telematics,
    feeds: powerLimits?.feed ? [powerLimits.feed] : [],
  });
  const chargers = buildChargers({
    ...basics,
    site,
    chargerRegistry,
    alertStore,
    storage,
    uplink,
    settingsPacing: options.settingsPacing,
  });
  const { central, metrics, consoleEvents } = chargers;
  const load = buildPower({
    config,
    site,
    records,
    central,
    clock,
    log,
    powerLimits,
    registry: metrics.registry,
  });
  const { live, lifecycle, charging, drain, localLists } = buildCharging({
    ...basics,
    site,
    tariffs,
    records,
    central,
    consoleEvents,
    load,
  });
  const { transfers, baseUrl, upkeep } = buildTransfers({
    ...basics,
    site,
    sessions,
    central,
    bound: chargers.transfers,
  });

  const killAt = armedKillPoint();
  if (killAt) log.warn({ killAt }, 'crash test: this process kills itself at a kill point');
  lifecycle.recover();

  const listeners = new Listeners(config.ocpp.tls !== undefined);
  const { api, operatorApi } = buildHttp({
    ...basics,
    site,
    tariffs,
    chargerRegistry,
    records,
    uplink,
    central,
    metrics,
    consoleEvents,
    recentCalls: chargers.recentCalls,
    alertStore,
    powerLimits,
    load,
    live,
    lifecycle,
    charging,
    drain,
    transfers,
    listeners,
    consoleBundleDir: options.consoleBundleDir,
  });
  const addresses = await listen({
    config,
    log,
    api,
    operatorApi,
    central,
    listeners,
    transferBaseUrl: baseUrl,
  });

  records.retention.start();
  upkeep.start();
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
          isOnline: (chargerId) => central.calls.isOnline(chargerId),
          connector: (chargerId, connectorId) => central.calls.connector(chargerId, connectorId),
        },
        outboxBacklog: () => storage.outboxHealth(),
      })
    : undefined;

  let closed = false;
  return {
    ...addresses,
    db,
    api,
    consoleEvents,
    chargers: central.calls,
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
      records.retention.stop();
      upkeep.stop();
      alerts?.close();
      try {
        logOpenSessions(log, drain.openSessions());
      } catch (err) {
        // The database failed under the gateway: stopping matters more than the list.
        log.error({ err: (err as Error).message }, 'stopping: open sessions could not be listed');
      }
      lifecycle.close();
      localLists.close();
      load?.close();
      powerLimits?.board.close();
      await central.close();
      const { ocppTls } = listeners;
      if (ocppTls) {
        ocppTls.closeAllConnections();
        await new Promise((resolve) => ocppTls.close(resolve));
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
