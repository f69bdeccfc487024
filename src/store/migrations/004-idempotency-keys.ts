/**
 * Schema for idempotent Start (appended after the schemas before it; never edited once released).
 * - idempotency_keys: a driver's `Idempotency-Key` bound to the session its first Start debited.
 *   It is written in the same transaction as that debit, so a crash can never leave a debit
 *   without its key or a key without its debit. The session row is the stored response: what a
 *   retry answers is derived from it (see src/charging/idempotency.ts). Keys are scoped to the
 *   driver, kept as long as the session (forever), and never change.
 */
export const migrationIdempotencyKeys = `
CREATE TABLE IF NOT EXISTS idempotency_keys (
  driver_id TEXT NOT NULL REFERENCES drivers(id),
  key TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  request_hash TEXT NOT NULL CHECK (length(request_hash) = 64),
  session_id TEXT NOT NULL UNIQUE REFERENCES sessions(id),
  created_at TEXT NOT NULL,
  PRIMARY KEY (driver_id, key)
) STRICT;
CREATE TRIGGER IF NOT EXISTS idempotency_keys_own_session BEFORE INSERT ON idempotency_keys
WHEN (SELECT driver_id FROM sessions WHERE id = NEW.session_id) IS NOT NEW.driver_id
BEGIN SELECT RAISE(ABORT, 'an idempotency key belongs to its own driver''s session'); END;
CREATE TRIGGER IF NOT EXISTS idempotency_keys_final BEFORE UPDATE ON idempotency_keys
BEGIN SELECT RAISE(ABORT, 'an idempotency key never changes'); END;
CREATE TRIGGER IF NOT EXISTS idempotency_keys_no_delete BEFORE DELETE ON idempotency_keys
BEGIN SELECT RAISE(ABORT, 'idempotency keys are never forgotten'); END;
`;
