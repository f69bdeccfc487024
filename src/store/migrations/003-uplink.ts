/**
 * Schema for the MQTT uplink (appended after the schemas before it; never edited once released).
 * Every statement is `IF NOT EXISTS`, so running it on a database that already has it is harmless.
 * - uplink_commands: the id of every command from the cloud that took effect, written in the same
 *   transaction as the effect, so a redelivered command is recognised and changes nothing;
 * - driver_telematics: the fleet's last telematics SoC per driver (their assigned vehicle);
 * - api_key_revocations: when a fleet API key stops being accepted (key rotation with an overlap);
 * - outbox rows are immutable once sent, and an unsent row is never deleted (only sent rows are
 *   pruned after their retention).
 */
export const migrationUplink = `
CREATE TABLE IF NOT EXISTS uplink_commands (
  id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
  type TEXT NOT NULL CHECK (length(type) BETWEEN 1 AND 64),
  result TEXT NOT NULL CHECK (json_valid(result)),
  applied_at TEXT NOT NULL
) STRICT;
CREATE TRIGGER IF NOT EXISTS uplink_commands_final BEFORE UPDATE ON uplink_commands
BEGIN SELECT RAISE(ABORT, 'an applied command never changes'); END;
CREATE TRIGGER IF NOT EXISTS uplink_commands_no_delete BEFORE DELETE ON uplink_commands
BEGIN SELECT RAISE(ABORT, 'applied commands are never forgotten'); END;

CREATE TABLE IF NOT EXISTS driver_telematics (
  driver_id TEXT PRIMARY KEY REFERENCES drivers(id),
  soc_percent REAL NOT NULL CHECK (soc_percent BETWEEN 0 AND 100),
  measured_at TEXT NOT NULL,
  received_at TEXT NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS api_key_revocations (
  key_hash TEXT PRIMARY KEY REFERENCES api_keys(key_hash),
  revoke_at_ms INTEGER NOT NULL CHECK (revoke_at_ms >= 0),
  created_at TEXT NOT NULL
) STRICT;

CREATE INDEX IF NOT EXISTS outbox_sent ON outbox(sent_at) WHERE sent_at IS NOT NULL;
CREATE TRIGGER IF NOT EXISTS outbox_unsent_kept BEFORE DELETE ON outbox
WHEN OLD.sent_at IS NULL
BEGIN SELECT RAISE(ABORT, 'an unsent outbox row is never deleted'); END;
CREATE TRIGGER IF NOT EXISTS outbox_immutable BEFORE UPDATE ON outbox
WHEN OLD.sent_at IS NOT NULL OR NEW.seq IS NOT OLD.seq OR NEW.id IS NOT OLD.id
  OR NEW.topic IS NOT OLD.topic OR NEW.payload IS NOT OLD.payload
  OR NEW.created_at IS NOT OLD.created_at
BEGIN SELECT RAISE(ABORT, 'an outbox row only ever changes by being marked sent once'); END;
`;
