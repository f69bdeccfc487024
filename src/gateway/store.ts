import type { GatewayConfig } from '../config/schema.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import { openDatabase, type Db } from '../store/database.js';
import { acquireGatewayLock, type GatewayLock } from '../store/gateway-lock.js';

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

/** The database, locked for this gateway: one gateway per database file. */
export function openStore(config: GatewayConfig, clock: Clock): OpenStore {
  const lock = lockDatabase(config.database.path, clock);
  try {
    return { db: openDatabase(config.database.path), lock };
  } catch (err) {
    lock?.release();
    throw err;
  }
}

function lockDatabase(path: string, clock: Clock): GatewayLock | undefined {
  if (path === ':memory:') return undefined;
  return acquireGatewayLock(path, new Date(clock.now()).toISOString());
}
