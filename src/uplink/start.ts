import type { ApiKeys } from '../auth/api-keys.js';
import type { GatewayConfig } from '../config/schema.js';
import type { FleetChanges } from '../fleet/fleet-changes.js';
import type { TokenChanges } from '../fleet/token-changes.js';
import type { Roster } from '../fleet/roster.js';
import type { Telematics } from '../fleet/telematics.js';
import type { ConnectorView } from '../ocpp/port.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import type { Outbox } from '../store/outbox.js';
import { CommandProcessor } from './command-processor.js';
import { OutboxMonitor } from './outbox-monitor.js';
import { OutboxQueue } from './outbox-queue.js';
import { uplinkSettings } from './settings.js';
import type { TopicFeed, UplinkHealth } from './uplink.js';

export interface UplinkDeps {
  config: GatewayConfig;
  db: Db;
  clock: Clock;
  log: Logger;
  outbox: Outbox;
  roster: Roster;
  fleetChanges: FleetChanges;
  tokenChanges: TokenChanges;
  apiKeys: ApiKeys;
  telematics: Telematics;
  /** Topics read on the uplink's connection besides commands (needs uplink.url). */
  feeds?: readonly TopicFeed[];
}

export interface RunningUplink {
  connectorChanged(view: ConnectorView): void;
  health(): UplinkHealth;
  close(): Promise<void>;
}

const MONITOR_INTERVAL_MS = 60_000;

/**
 * Starts the outbox monitor (always) and, when a broker is configured, the MQTT uplink. Without
 * a broker the gateway runs on its own and the outbox keeps every change until one is configured,
 * and MQTT.js is not even loaded (about 30 ms of CPU at start-up).
 */
export async function startUplink(d: UplinkDeps): Promise<RunningUplink> {
  const log = d.log.child({ component: 'uplink' });
  const queue = new OutboxQueue(d.db);
  const monitor = new OutboxMonitor({
    queue,
    clock: d.clock,
    log,
    sentRetentionMs: d.config.uplink.outbox.sentRetentionHours * 3_600_000,
    warnDepth: d.config.uplink.outbox.warnDepth,
    errorDepth: d.config.uplink.outbox.errorDepth,
    warnAgeMs: d.config.uplink.outbox.warnAgeMinutes * 60_000,
    errorAgeMs: d.config.uplink.outbox.errorAgeMinutes * 60_000,
    intervalMs: MONITOR_INTERVAL_MS,
  });
  monitor.start();
  const settings = uplinkSettings(d.config);
  if (!settings) {
    const { depth } = queue.depth();
    log.warn(
      { outboxDepth: depth },
      'uplink off: no broker configured (uplink.url); changes stay queued in the outbox',
    );
    return {
      connectorChanged: () => undefined,
      health: (): UplinkHealth => {
        const { depth, oldestUnsentAt } = queue.depth();
        return {
          enabled: false,
          connected: false,
          outboxDepth: depth,
          oldestUnsentAt,
          published: 0,
        };
      },
      close: async () => monitor.stop(),
    };
  }
  const { Uplink } = await import('./uplink.js');
  const commands = new CommandProcessor(d);
  const uplink = new Uplink({
    settings,
    siteId: d.config.siteId,
    clock: d.clock,
    log,
    outbox: d.outbox,
    queue,
    commands,
    feeds: d.feeds ?? [],
  });
  uplink.start();
  return {
    connectorChanged: (view) => uplink.connectorChanged(view),
    health: () => uplink.health(),
    close: async () => {
      monitor.stop();
      await uplink.close();
    },
  };
}
