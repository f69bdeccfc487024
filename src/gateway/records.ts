import { AlertStore } from '../alerts/alert-store.js';
import { ApiKeys } from '../auth/api-keys.js';
import { SessionOutcomes } from '../charging/outcomes.js';
import { SessionStore } from '../charging/session-store.js';
import { SessionViews } from '../charging/session-view.js';
import { ChargerRegistry } from '../config/charger-registry.js';
import { SiteDirectory } from '../config/site.js';
import { TariffBook } from '../config/tariff-book.js';
import { FleetChanges } from '../fleet/fleet-changes.js';
import { Roster } from '../fleet/roster.js';
import { Telematics } from '../fleet/telematics.js';
import { TokenChanges } from '../fleet/token-changes.js';
import { IdTokenStore } from '../id-tokens/id-token-store.js';
import { Outbox } from '../store/outbox.js';
import { Retention } from '../store/retention.js';
import { StorageHealth } from '../store/storage-health.js';
import { WriteProbe } from '../store/write-probe.js';
import { Wallet } from '../wallet/wallet.js';
import type { Basics } from './store.js';

/**
 * The site as the config file and the database say it: tariffs (seeded from the file), the
 * chargers (synced from it) and the directory that reads both.
 */
export function buildSite({ config, db, clock, log }: Basics) {
  const tariffs = new TariffBook(db, config.site.timeZone, config.pricing.tariffSource);
  const { differs } = tariffs.seed(config.tariffs, new Date(clock.now()).toISOString());
  if (differs.length > 0)
    log.warn(
      { tariffIds: differs },
      'tariffs in the config file differ from the database, which holds the prices (pricing.tariffSource: database)',
    );
  const site = new SiteDirectory(config, tariffs);
  const chargerRegistry = new ChargerRegistry(db, site);
  const retiredInConfig = chargerRegistry.syncFromConfig(config.chargers, clock.now());
  if (retiredInConfig.length > 0)
    log.warn({ chargerIds: retiredInConfig }, 'chargers in the config file were retired: refused');
  return { tariffs, site, chargerRegistry };
}

/** What the database holds (money, sessions, fleets, keys, alerts) and the watch over its size. */
export function buildRecords({ config, db, clock, log }: Basics) {
  const outbox = new Outbox(db);
  const alertStore = new AlertStore(
    db,
    outbox,
    config.siteId,
    config.alerts?.webhook !== undefined,
  );
  const wallet = new Wallet(db, outbox);
  const roster = new Roster(db);
  const sessions = new SessionStore(db);
  return {
    outbox,
    alertStore,
    wallet,
    roster,
    fleetChanges: new FleetChanges(roster, wallet),
    tokenChanges: new TokenChanges(roster, new IdTokenStore(db)),
    sessions,
    sessionViews: new SessionViews(db),
    outcomes: new SessionOutcomes(db, sessions, wallet, outbox),
    apiKeys: new ApiKeys(db, clock),
    telematics: new Telematics(db),
    storage: new StorageHealth(db, outbox, () => clock.now(), {
      warnDepth: config.uplink.outbox.warnDepth,
      errorDepth: config.uplink.outbox.errorDepth,
      warnAgeMs: config.uplink.outbox.warnAgeMinutes * 60_000,
      errorAgeMs: config.uplink.outbox.errorAgeMinutes * 60_000,
    }),
    retention: new Retention({
      db,
      clock,
      log: log.child({ component: 'retention' }),
      windows: config.retention,
      batchRows: config.retention.batchRows,
      intervalMs: config.retention.intervalMinutes * 60_000,
    }),
    writeProbe: new WriteProbe(db),
  };
}

export type Records = ReturnType<typeof buildRecords>;
export type Site = ReturnType<typeof buildSite>;
