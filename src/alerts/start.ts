import { dirname } from 'node:path';
import type { AlertsConfig, GatewayConfig } from '../config/schema.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import type { AlertKind } from './alert.js';
import type { AlertStore } from './alert-store.js';
import { AlertWatch } from './alert-watch.js';
import {
  certificateObservations,
  chargerObservations,
  diskObservation,
  outboxObservation,
  type ChargerLook,
} from './conditions.js';
import { WebhookSender } from './webhook.js';

export interface RunningAlerts {
  watch: AlertWatch;
  webhook: WebhookSender | undefined;
  close(): void;
}

/** A listener's TLS config: one cert, or several (`certificates`, an RSA and an ECDSA one). */
interface ListenerTls {
  cert?: string | undefined;
  certificates?: readonly { cert: string }[] | undefined;
}

/** The listeners' certificates, named by their config key. */
function certificateFiles(config: GatewayConfig): { listener: string; cert: string }[] {
  const listeners: [string, ListenerTls | undefined][] = [
    ['http.tls', config.http.tls],
    ['ocpp.tls', config.ocpp.tls],
    ['operator.http.tls', config.operator.http?.tls],
  ];
  return listeners.flatMap(([listener, tls]) => [
    ...(tls?.cert === undefined ? [] : [{ listener, cert: tls.cert }]),
    ...(tls?.certificates ?? []).map((c, i) => ({
      listener: `${listener}.certificates.${i}`,
      cert: c.cert,
    })),
  ]);
}

/** Starts the watch and the webhook sender of config `alerts` (absent: nothing runs). */
export function startAlerts(d: {
  config: GatewayConfig;
  alerts: AlertsConfig;
  db: Db;
  store: AlertStore;
  clock: Clock;
  log: Logger;
  chargers: ChargerLook;
  outboxBacklog: () => { depth: number; oldestUnsentAgeSeconds: number };
}): RunningAlerts {
  const a = d.alerts;
  const log = d.log.child({ component: 'alerts' });
  const databaseDir = d.config.database.path === ':memory:' ? '.' : dirname(d.config.database.path);
  const certs = certificateFiles(d.config);
  const raiseAfterMs = (kind: AlertKind): number =>
    (kind === 'charger_offline' ? a.chargerOfflineSeconds : a.raiseAfterSeconds) * 1000;
  const watch = new AlertWatch({
    db: d.db,
    store: d.store,
    clock: d.clock,
    log,
    checkMs: a.checkSeconds * 1000,
    raiseAfterMs,
    clearAfterMs: a.clearAfterSeconds * 1000,
    observe: () => [
      ...chargerObservations(d.chargers, a.chargerFaulted),
      ...outboxObservation(d.outboxBacklog(), {
        depth: a.outboxDepth,
        ageSeconds: a.outboxAgeSeconds,
      }),
      ...diskObservation(databaseDir, a.diskFreePercent),
      ...certificateObservations(certs, a.certificateDays, d.clock.now()),
    ],
    stopEscalated: a.stopEscalated,
    operatorLossWh: a.operatorLossWh,
  });
  const webhook = a.webhook
    ? new WebhookSender({
        db: d.db,
        clock: d.clock,
        log,
        url: a.webhook.url,
        secret: a.webhook.secret,
        timeoutMs: a.webhook.timeoutSeconds * 1000,
        retryMs: a.webhook.retrySeconds * 1000,
        maxRetryMs: a.webhook.maxRetrySeconds * 1000,
        giveUpMs: a.webhook.giveUpHours * 3_600_000,
      })
    : undefined;
  if (webhook) d.store.onQueued(() => webhook.kick());
  webhook?.start();
  watch.start();
  return {
    watch,
    webhook,
    close() {
      watch.stop();
      webhook?.stop();
    },
  };
}
