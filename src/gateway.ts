import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApi } from './api/app.js';
import { ApiKeys } from './auth/api-keys.js';
import { DriverTokens } from './auth/driver-tokens.js';
import { Charging } from './charging/charging.js';
import { SessionLifecycle } from './charging/lifecycle.js';
import { SessionOutcomes } from './charging/outcomes.js';
import { SessionStore } from './charging/session-store.js';
import type { GatewayConfig } from './config/schema.js';
import { SiteDirectory } from './config/site.js';
import { Roster } from './fleet/roster.js';
import { Telematics } from './fleet/telematics.js';
import { CentralSystem } from './ocpp/central-system.js';
import { systemClock, type Clock } from './shared/clock.js';
import { createLogger, type Logger } from './shared/log.js';
import { openDatabase, type Db } from './store/database.js';
import { Outbox } from './store/outbox.js';
import { startUplink } from './uplink/start.js';
import { Wallet } from './wallet/wallet.js';

export interface GatewayOptions {
  clock?: Clock;
  log?: Logger;
}

export interface RunningGateway {
  /** http://host:port */
  url: string;
  /** ws://host:port/<ocpp path>; chargers append /<chargePointId> */
  ocppUrl: string;
  port: number;
  db: Db;
  api: FastifyInstance;
  close(): Promise<void>;
}

/** The composition root: builds every part from the config and starts listening. */
export async function startGateway(
  config: GatewayConfig,
  options: GatewayOptions = {},
): Promise<RunningGateway> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.log.level);
  const db = openDatabase(config.database.path);
  const site = new SiteDirectory(config);
  const outbox = new Outbox(db);
  const wallet = new Wallet(db, outbox);
  const roster = new Roster(db);
  const sessions = new SessionStore(db);
  const outcomes = new SessionOutcomes(db, sessions, wallet, outbox);
  const apiKeys = new ApiKeys(db, clock);
  const telematics = new Telematics(db);
  const uplink = startUplink({
    config,
    db,
    clock,
    log,
    outbox,
    wallet,
    roster,
    apiKeys,
    telematics,
  });

  const central = new CentralSystem({
    db,
    site,
    clock,
    log: log.child({ component: 'ocpp' }),
    path: config.ocpp.path,
    heartbeatIntervalSeconds: config.ocpp.heartbeatIntervalSeconds,
    meterSampleIntervalSeconds: config.ocpp.meterSampleIntervalSeconds,
    connectionTimeoutSeconds: Math.ceil(config.sessions.startTimeoutSeconds),
    callTimeoutMs: config.ocpp.callTimeoutSeconds * 1000,
    onConnectorChange: (view) => uplink.connectorChanged(view),
  });
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
    stopGraceMs: config.sessions.stopGraceSeconds * 1000,
    silenceMs: config.sessions.settleAfterSilenceSeconds * 1000,
  });
  central.setEvents(lifecycle);
  const charging = new Charging({
    db,
    clock,
    log: log.child({ component: 'charging' }),
    site,
    wallet,
    sessions,
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
    telematics,
  });

  lifecycle.recover();

  const api = buildApi({
    log,
    bodyLimitBytes: config.http.bodyLimitBytes,
    maxAmount: config.sessions.maxAmount,
    apiKeys,
    driverTokens: new DriverTokens(db, clock, config.tokens.driverTokenTtlSeconds),
    roster,
    charging,
    health: () => ({
      chargersOnline: central.onlineCount(),
      outboxDepth: outbox.depth(),
      uplink: uplink.health(),
    }),
  });
  central.attach(api.server);
  await api.listen({ host: config.http.host, port: config.http.port });
  const address = api.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  log.info(
    { siteId: config.siteId, host: address.address, port: address.port },
    'gateway listening',
  );

  let closed = false;
  return {
    url: `http://${host}:${address.port}`,
    ocppUrl: `ws://${host}:${address.port}${config.ocpp.path}`,
    port: address.port,
    db,
    api,
    async close() {
      if (closed) return;
      closed = true;
      lifecycle.close();
      await central.close();
      await api.close();
      await uplink.close();
      db.close();
      log.info('gateway stopped');
    },
  };
}
