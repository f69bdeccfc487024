import type { Db } from '../store/database.js';

/** Told of every write, on the database's connection, to what a quote reads. */
export interface QuoteChangeListener {
  /** The driver's row, wallet or telematics SoC changed. */
  driverChanged(driverId: string): void;
  /** A session on this connector was opened, moved, changed state or was deleted. */
  connectorChanged(chargerId: string, connectorId: string): void;
}

const DRIVER_FN = 'fleet_gateway_quote_driver_changed';
const CONNECTOR_FN = 'fleet_gateway_quote_connector_changed';

/**
 * TEMP triggers: they live on this connection only, are never written to the database file, and
 * fire inside the writing statement, whichever code path ran it. A session UPDATE that sets none
 * of the columns a quote reads (a meter sample) fires nothing.
 */
const TRIGGERS = `
CREATE TEMP TRIGGER quote_drivers_update AFTER UPDATE ON main.drivers
BEGIN SELECT ${DRIVER_FN}(OLD.id), ${DRIVER_FN}(NEW.id); END;
CREATE TEMP TRIGGER quote_drivers_delete AFTER DELETE ON main.drivers
BEGIN SELECT ${DRIVER_FN}(OLD.id); END;
CREATE TEMP TRIGGER quote_wallets_insert AFTER INSERT ON main.wallets
BEGIN SELECT ${DRIVER_FN}(NEW.driver_id); END;
CREATE TEMP TRIGGER quote_wallets_update AFTER UPDATE ON main.wallets
BEGIN SELECT ${DRIVER_FN}(OLD.driver_id), ${DRIVER_FN}(NEW.driver_id); END;
CREATE TEMP TRIGGER quote_wallets_delete AFTER DELETE ON main.wallets
BEGIN SELECT ${DRIVER_FN}(OLD.driver_id); END;
CREATE TEMP TRIGGER quote_telematics_insert AFTER INSERT ON main.driver_telematics
BEGIN SELECT ${DRIVER_FN}(NEW.driver_id); END;
CREATE TEMP TRIGGER quote_telematics_update AFTER UPDATE ON main.driver_telematics
BEGIN SELECT ${DRIVER_FN}(OLD.driver_id), ${DRIVER_FN}(NEW.driver_id); END;
CREATE TEMP TRIGGER quote_telematics_delete AFTER DELETE ON main.driver_telematics
BEGIN SELECT ${DRIVER_FN}(OLD.driver_id); END;
CREATE TEMP TRIGGER quote_sessions_insert AFTER INSERT ON main.sessions
BEGIN SELECT ${CONNECTOR_FN}(NEW.charger_id, NEW.connector_id); END;
CREATE TEMP TRIGGER quote_sessions_update
AFTER UPDATE OF id, driver_id, charger_id, connector_id, state ON main.sessions
BEGIN SELECT ${CONNECTOR_FN}(OLD.charger_id, OLD.connector_id), ${CONNECTOR_FN}(NEW.charger_id, NEW.connector_id); END;
CREATE TEMP TRIGGER quote_sessions_delete AFTER DELETE ON main.sessions
BEGIN SELECT ${CONNECTOR_FN}(OLD.charger_id, OLD.connector_id); END;
`;

const listenersByDb = new WeakMap<Db, Set<QuoteChangeListener>>();

/**
 * Tells `listener` of every write this connection makes to the rows a quote reads: the drivers,
 * wallets, driver_telematics and sessions tables (after the migrations made them). Writes by other
 * connections (another process: `seed`) fire nothing here; `PRAGMA data_version` tells of those.
 * A write rolled back has still been told: the listener forgets more than it had to, never less.
 */
export function onQuoteChanges(db: Db, listener: QuoteChangeListener): void {
  let listeners = listenersByDb.get(db);
  if (!listeners) {
    const all = new Set<QuoteChangeListener>();
    db.function(DRIVER_FN, { deterministic: false }, (driverId: unknown) => {
      for (const l of all) l.driverChanged(String(driverId));
      return null;
    });
    db.function(
      CONNECTOR_FN,
      { deterministic: false },
      (chargerId: unknown, connectorId: unknown) => {
        for (const l of all) l.connectorChanged(String(chargerId), String(connectorId));
        return null;
      },
    );
    db.exec(TRIGGERS);
    listenersByDb.set(db, all);
    listeners = all;
  }
  listeners.add(listener);
}
