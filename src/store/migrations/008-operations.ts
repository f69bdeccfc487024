/**
 * Schema for safe operations and bounded data (appended after the schemas before it; never edited
 * once released). Every statement is idempotent.
 * - gateway_probe: one row the readiness check rewrites, so "ready" means a write really reached
 *   the database file (a read-only file, a full disk, a lost mount fail it);
 * - retention (src/store/retention.ts) may now delete what only grows: idempotency keys and
 *   applied uplink command ids older than their window, 2.0.1 transaction events and OCPP event
 *   rows. The schema still refuses what no window may touch: the key of a session that is not
 *   settled or refunded (a retry must find it), and the events of a transaction whose session is
 *   open. Money rows (ledger, sessions, wallets) keep their never-delete triggers.
 */
export const migrationOperations = `
CREATE TABLE IF NOT EXISTS gateway_probe (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  pid INTEGER NOT NULL,
  at TEXT NOT NULL
) STRICT;

DROP TRIGGER IF EXISTS idempotency_keys_no_delete;
CREATE TRIGGER IF NOT EXISTS idempotency_keys_kept_while_open BEFORE DELETE ON idempotency_keys
WHEN (SELECT state FROM sessions WHERE id = OLD.session_id) NOT IN ('settled', 'refunded')
BEGIN SELECT RAISE(ABORT, 'the idempotency key of an open session is never forgotten'); END;
CREATE INDEX IF NOT EXISTS idempotency_keys_created ON idempotency_keys(created_at);

DROP TRIGGER IF EXISTS uplink_commands_no_delete;
CREATE INDEX IF NOT EXISTS uplink_commands_applied ON uplink_commands(applied_at);

CREATE INDEX IF NOT EXISTS ocpp_events_at ON ocpp_events(at);

CREATE INDEX IF NOT EXISTS ocpp201_transaction_events_received
  ON ocpp201_transaction_events(received_at);
CREATE TRIGGER IF NOT EXISTS ocpp201_transaction_events_kept_while_open
BEFORE DELETE ON ocpp201_transaction_events
WHEN EXISTS (SELECT 1 FROM sessions WHERE charger_id = OLD.charger_id
  AND transaction_ref = OLD.transaction_id
  AND state IN ('authorizing', 'authorized', 'charging', 'stopping'))
BEGIN SELECT RAISE(ABORT, 'the events of an open session''s transaction are kept'); END;
`;
