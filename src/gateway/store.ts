import type { GatewayConfig } from '../config/schema.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import { openDatabase, type Db } from '../store/database.js';
import { acquireGatewayLock, type GatewayLock } from '../store/gateway-lock.js';
import { adoptPageSize } from '../store/page-size.js';

/** What every step of the composition root is built with. */
export interface Basics {
  config: GatewayConfig;
  db: Db;
  clock: Clock;
  log: Logger;
}

export interface OpenStore {
  db: Db;
  /** Undefined for an in-memory database (it is its own). */
  lock: GatewayLock | undefined;
}

/**
 * The database, locked for this gateway: one gateway per database file; a file made with
 * another page size is rewritten into the gateway's first (store/page-size.ts).
 */
export function openStore(config: GatewayConfig, clock: Clock, log: Logger): OpenStore {
  const lock = lockDatabase(config.database.path, clock);
  try {
    const db = openDatabase(config.database.path, { cacheKiB: config.database.cacheKiB });
    const pages = adoptPageSize(db);
    if ('failed' in pages) {
      log.warn(
        { pageSize: pages.pageSize, err: pages.failed },
        'database page size not changed: it stays as it was and the next start tries again',
      );
    } else if (pages.changed) {
      log.info(
        { from: pages.from, to: pages.to, ms: pages.ms, bytes: pages.bytes },
        'database rewritten into smaller pages: fewer bytes written per meter sample',
      );
    }
    return { db, lock };
  } catch (err) {
    lock?.release();
    throw err;
  }
}

function lockDatabase(path: string, clock: Clock): GatewayLock | undefined {
  if (path === ':memory:') return undefined;
  return acquireGatewayLock(path, new Date(clock.now()).toISOString());
}
