import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/log.js';
import type { Db } from '../../store/database.js';
import { LocalListStore } from './list-store.js';
import {
  LocalListSync,
  type LocalListSettings,
  type LocalListSyncDeps,
} from './local-list-sync.js';
import { WantedList } from './wanted-list.js';

export interface LocalListsDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  chargers: LocalListSyncDeps['chargers'];
  chargerIds: () => readonly string[];
  settings: LocalListSettings;
  /** The least balance a fleet's wallet needs to pay a tap (the tap policy's minimum). */
  minimumFor: (fleetId: string) => number;
}

/** The chargers' local lists and caches, kept in step from now on (a round every pollSeconds). */
export function startLocalLists(d: LocalListsDeps): LocalListSync {
  const sync = new LocalListSync({
    chargers: d.chargers,
    chargerIds: d.chargerIds,
    wanted: new WantedList(d.db, d.minimumFor),
    store: new LocalListStore(d.db, () => new Date(d.clock.now()).toISOString()),
    clock: d.clock,
    log: d.log,
    settings: d.settings,
  });
  sync.start();
  return sync;
}
