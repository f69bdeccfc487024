import type { AlertStore } from '../alerts/alert-store.js';
import type { ChargerRegistry } from '../config/charger-registry.js';
import type { SiteDirectory } from '../config/site.js';
import { ConsoleEventHub } from '../console/event-hub.js';
import { GatewayMetrics } from '../metrics/metrics.js';
import { CentralSystem } from '../ocpp/central-system.js';
import type { SettingsPacingOptions } from '../ocpp/charger-state/settings-pacing.js';
import { RecentCalls } from '../operator/recent-calls.js';
import type { StorageHealth } from '../store/storage-health.js';
import type { Transfers } from '../transfers/transfers.js';
import type { RunningUplink } from '../uplink/start.js';
import { LateBound } from './late-bound.js';
import type { Basics } from './store.js';

export interface ChargersDeps extends Basics {
  site: SiteDirectory;
  chargerRegistry: ChargerRegistry;
  alertStore: AlertStore;
  storage: StorageHealth;
  uplink: RunningUplink;
  settingsPacing: SettingsPacingOptions | undefined;
}

/**
 * The central system the chargers connect to, with what watches it: the metrics (it reports each
 * call to them, they read its chargers at scrape time), the console's live events and the
 * operator's recent calls. Transfer reports go to the transfers built after it (they command it).
 */
export function buildChargers(d: ChargersDeps) {
  const { config, db, clock, log, site, chargerRegistry, alertStore } = d;
  const central = new LateBound<CentralSystem>('the central system');
  const transfers = new LateBound<Transfers>('the transfers');
  const metrics = new GatewayMetrics({
    db,
    site,
    chargers: {
      onlineByProtocol: () => central.get().onlineByProtocol(),
      connector: (chargerId, connectorId) => central.get().calls.connector(chargerId, connectorId),
    },
    storage: d.storage,
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
  const chargers = new CentralSystem({
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
    screens: config.screens.enabled,
    authFailureDelay: {
      initialMs: config.ocpp.authFailureDelay.initialMilliseconds,
      maxMs: config.ocpp.authFailureDelay.maxMilliseconds,
    },
    onConnectorChange: (view) => d.uplink.connectorChanged(view),
    observer: metrics,
    onChargerOffline: (chargerId) => consoleEvents.publish('charger.offline', { chargerId }),
    onDeviation: (chargerId, kind) => consoleEvents.publish('deviation', { chargerId, kind }),
    onCall: (chargerId, call) => recentCalls.record(chargerId, call, clock.now()),
    onCredentialUsed: (chargerId, credential) =>
      chargerRegistry.credentialUsed(chargerId, credential, clock.now()),
    onTransferStatus: (chargerId, status) => transfers.get().statusReported(chargerId, status),
    // Money the gateway did not move: an alert for the operator to reconcile, never a ledger entry.
    onStationPayment: (chargerId, payment) =>
      alertStore.raise(
        'station_payment',
        `${chargerId}/${payment.pspRef}`,
        { chargerId, ...payment },
        new Date(clock.now()).toISOString(),
      ),
    ...(d.settingsPacing ? { settingsPacing: d.settingsPacing } : {}),
  });
  central.set(chargers);
  return { central: chargers, metrics, consoleEvents, recentCalls, transfers };
}

export type Chargers = ReturnType<typeof buildChargers>;
