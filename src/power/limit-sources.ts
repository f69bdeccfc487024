import { Counter, type Registry } from 'prom-client';
import type { GatewayConfig } from '../config/schema.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import type { EdgeTimers } from './edge-timer.js';
import { LimitBoard } from './limit-board.js';
import { LimitFeed } from './limit-feed.js';
import { ConfigLimits, SITE_NODE } from './limits.js';
import { OverrideStore } from './override-store.js';
import { kwToWatts, PowerSchedule } from './schedule.js';

/** The site's run-time limit sources: the board load management reads, and the feed's edge. */
export interface PowerLimits {
  board: LimitBoard;
  /** Present when power.feed is configured (the uplink subscribes its topic). */
  feed: LimitFeed | undefined;
  timeZone: string;
}

/** Builds the board from the config (undefined without `power`); overrides come back from SQLite. */
export function startLimitSources(d: {
  config: GatewayConfig;
  db: Db;
  clock: Clock;
  log: Logger;
  timers?: EdgeTimers;
}): PowerLimits | undefined {
  const power = d.config.power;
  if (!power) return undefined;
  const log = d.log.child({ component: 'power-limits' });
  const base = new ConfigLimits(power);
  const board = new LimitBoard({
    base,
    nodeIds: base.nodeIds(),
    siteNodeId: SITE_NODE,
    clock: d.clock,
    ...(d.timers ? { timers: d.timers } : {}),
    schedule: new PowerSchedule(power.schedule, d.config.site.timeZone, SITE_NODE),
    feed: power.feed
      ? {
          fallbackWatts:
            power.feed.fallbackKw === undefined ? undefined : kwToWatts(power.feed.fallbackKw),
        }
      : undefined,
    persistence: new OverrideStore(d.db),
    log,
  });
  const feed = power.feed
    ? new LimitFeed({
        topic: power.feed.topic,
        board,
        siteNodeId: SITE_NODE,
        staleAfterMs: power.feed.staleAfterSeconds * 1000,
        now: () => d.clock.now(),
        log,
      })
    : undefined;
  const site = board.limit(SITE_NODE);
  log.info(
    {
      timeZone: d.config.site.timeZone,
      siteWatts: site.watts,
      source: site.source,
      scheduleWindows: power.schedule.length,
      feedTopic: power.feed?.topic,
    },
    'site power limits',
  );
  return { board, feed, timeZone: d.config.site.timeZone };
}

/** fleetgw_power_feed_messages_total{outcome}: read from the feed's own counts at scrape time. */
export function registerFeedMetrics(registry: Registry, feed: LimitFeed): void {
  new Counter({
    name: 'fleetgw_power_feed_messages_total',
    help: 'Power limit feed messages: accepted, or why not applied (not_json, invalid, unknown_node, retained)',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      const s = feed.stats();
      this.reset();
      this.inc({ outcome: 'accepted' }, s.accepted);
      for (const [outcome, n] of Object.entries(s.rejected)) this.inc({ outcome }, n);
    },
  });
}
