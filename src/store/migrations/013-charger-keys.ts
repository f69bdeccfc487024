/**
 * Generated charger keys (`fleet-gateway charger-key`), stored as `hmac-sha256$salt$mac`: the
 * same life as a charger_passwords row (added, only ever ended earlier, never deleted), in a table
 * of their own because charger_passwords admits scrypt hashes only and a released table is never
 * rebuilt. A charger's accepted credentials are the valid rows of both (config/charger-registry.ts).
 */
export const migrationChargerKeys = `
CREATE TABLE charger_keys (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  charger_id TEXT NOT NULL REFERENCES site_chargers(id),
  key_hash TEXT NOT NULL CHECK (key_hash LIKE 'hmac-sha256$%'),
  valid_from_ms INTEGER NOT NULL,
  valid_until_ms INTEGER CHECK (valid_until_ms IS NULL OR valid_until_ms >= valid_from_ms),
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX charger_keys_charger ON charger_keys(charger_id, seq);
CREATE TRIGGER charger_keys_no_delete BEFORE DELETE ON charger_keys
BEGIN SELECT RAISE(ABORT, 'charger keys expire, never deleted'); END;
CREATE TRIGGER charger_keys_only_end BEFORE UPDATE ON charger_keys
WHEN NEW.seq IS NOT OLD.seq OR NEW.charger_id IS NOT OLD.charger_id
  OR NEW.key_hash IS NOT OLD.key_hash OR NEW.valid_from_ms IS NOT OLD.valid_from_ms
  OR NEW.created_at IS NOT OLD.created_at
  OR (OLD.valid_until_ms IS NOT NULL AND NEW.valid_until_ms > OLD.valid_until_ms)
BEGIN SELECT RAISE(ABORT, 'a charger key only ever gets an earlier end'); END;
`;
