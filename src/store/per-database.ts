import type { Db } from './database.js';

/**
 * One instance per database of something that holds prepared statements (and what must be one
 * per database, as the 2.0.1 replay check's highest seqNos): a connection-scoped holder would
 * prepare (and keep, a few KB of SQLite program each) the same statements once per connected
 * charger.
 */
export function perDatabase<T>(make: (db: Db) => T): (db: Db) => T {
  const made = new WeakMap<Db, T>();
  return (db) => {
    let value = made.get(db);
    if (value === undefined) {
      value = make(db);
      made.set(db, value);
    }
    return value;
  };
}
