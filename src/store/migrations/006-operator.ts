/**
 * Schema for the operator's side (appended after the schemas before it; never edited once
 * released). Every statement is `IF NOT EXISTS`, so running it twice is harmless.
 * - operators: people (or scripts) allowed on the operator API, with a role; their credential is
 *   stored only as its SHA-256 (a 256-bit random secret, like an API key). A revoked operator is
 *   kept (the audit trail names it) and never comes back.
 * - operator_audit: who did what, when, with which parameters (never a secret) and what came of
 *   it. Append-only, like the ledger.
 * - operator_requests: an operator money action's client-supplied id (Idempotency-Key), bound to
 *   the request it first came with and the answer it got, written in the same transaction as the
 *   ledger entry: a retry gets the same answer and moves no money twice.
 * - ledger_notes: who moved money by hand and why (operator top-ups and adjustments, and the
 *   reason of an uplink adjustment); one note per ledger entry, never changed.
 * - site_chargers / charger_passwords: chargers added, retired and re-keyed at runtime (see
 *   docs/operator-api.md, "Which source is authoritative"). A password hash has a validity
 *   window so that the old and the new one both work during a rotation's overlap.
 */
export const migrationOperator = `
CREATE TABLE IF NOT EXISTS operators (
  id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 64),
  name TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 100),
  role TEXT NOT NULL CHECK (role IN ('viewer', 'operator')),
  credential_hash TEXT NOT NULL UNIQUE CHECK (length(credential_hash) = 64),
  created_at TEXT NOT NULL,
  revoked_at TEXT
) STRICT;
CREATE TRIGGER IF NOT EXISTS operators_no_delete BEFORE DELETE ON operators
BEGIN SELECT RAISE(ABORT, 'operators are revoked, never deleted'); END;
CREATE TRIGGER IF NOT EXISTS operators_revocation_final BEFORE UPDATE ON operators
WHEN OLD.revoked_at IS NOT NULL OR NEW.id IS NOT OLD.id OR NEW.credential_hash IS NOT OLD.credential_hash
  OR NEW.created_at IS NOT OLD.created_at OR NEW.name IS NOT OLD.name
BEGIN SELECT RAISE(ABORT, 'an operator only changes role or is revoked, once'); END;

CREATE TABLE IF NOT EXISTS operator_audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL,
  operator_id TEXT NOT NULL,
  operator_name TEXT NOT NULL,
  action TEXT NOT NULL CHECK (length(action) BETWEEN 1 AND 100),
  params TEXT NOT NULL CHECK (json_valid(params)),
  status INTEGER NOT NULL,
  result TEXT NOT NULL CHECK (json_valid(result))
) STRICT;
CREATE INDEX IF NOT EXISTS operator_audit_operator ON operator_audit(operator_id, seq);
CREATE TRIGGER IF NOT EXISTS operator_audit_no_update BEFORE UPDATE ON operator_audit
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
CREATE TRIGGER IF NOT EXISTS operator_audit_no_delete BEFORE DELETE ON operator_audit
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;

CREATE TABLE IF NOT EXISTS operator_requests (
  key TEXT PRIMARY KEY CHECK (length(key) BETWEEN 1 AND 255),
  action TEXT NOT NULL,
  request_hash TEXT NOT NULL CHECK (length(request_hash) = 64),
  operator_id TEXT NOT NULL REFERENCES operators(id),
  status INTEGER NOT NULL,
  response TEXT NOT NULL CHECK (json_valid(response)),
  created_at TEXT NOT NULL
) STRICT;
CREATE TRIGGER IF NOT EXISTS operator_requests_final BEFORE UPDATE ON operator_requests
BEGIN SELECT RAISE(ABORT, 'an operator request never changes'); END;
CREATE TRIGGER IF NOT EXISTS operator_requests_no_delete BEFORE DELETE ON operator_requests
BEGIN SELECT RAISE(ABORT, 'operator requests are never forgotten'); END;

CREATE TABLE IF NOT EXISTS ledger_notes (
  entry_id TEXT PRIMARY KEY REFERENCES ledger_entries(id),
  actor TEXT NOT NULL CHECK (length(actor) BETWEEN 1 AND 200),
  reason TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
  created_at TEXT NOT NULL
) STRICT;
CREATE TRIGGER IF NOT EXISTS ledger_notes_no_update BEFORE UPDATE ON ledger_notes
BEGIN SELECT RAISE(ABORT, 'a ledger note never changes'); END;
CREATE TRIGGER IF NOT EXISTS ledger_notes_no_delete BEFORE DELETE ON ledger_notes
BEGIN SELECT RAISE(ABORT, 'a ledger note never changes'); END;

CREATE TABLE IF NOT EXISTS site_chargers (
  id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 48),
  security_profile INTEGER NOT NULL CHECK (security_profile IN (1, 2, 3)),
  connectors TEXT NOT NULL CHECK (json_valid(connectors) AND json_type(connectors) = 'array'),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  retired_at TEXT
) STRICT;
CREATE TRIGGER IF NOT EXISTS site_chargers_no_delete BEFORE DELETE ON site_chargers
BEGIN SELECT RAISE(ABORT, 'chargers are retired, never deleted'); END;
CREATE TRIGGER IF NOT EXISTS site_chargers_retired_final BEFORE UPDATE ON site_chargers
WHEN OLD.retired_at IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'a retired charger never changes'); END;

CREATE TABLE IF NOT EXISTS charger_passwords (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  charger_id TEXT NOT NULL REFERENCES site_chargers(id),
  password_hash TEXT NOT NULL CHECK (password_hash LIKE 'scrypt$%'),
  valid_from_ms INTEGER NOT NULL,
  valid_until_ms INTEGER CHECK (valid_until_ms IS NULL OR valid_until_ms >= valid_from_ms),
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS charger_passwords_charger ON charger_passwords(charger_id, seq);
CREATE TRIGGER IF NOT EXISTS charger_passwords_no_delete BEFORE DELETE ON charger_passwords
BEGIN SELECT RAISE(ABORT, 'charger passwords expire, never deleted'); END;
CREATE TRIGGER IF NOT EXISTS charger_passwords_only_end BEFORE UPDATE ON charger_passwords
WHEN NEW.seq IS NOT OLD.seq OR NEW.charger_id IS NOT OLD.charger_id
  OR NEW.password_hash IS NOT OLD.password_hash OR NEW.valid_from_ms IS NOT OLD.valid_from_ms
  OR NEW.created_at IS NOT OLD.created_at
  OR (OLD.valid_until_ms IS NOT NULL AND NEW.valid_until_ms > OLD.valid_until_ms)
BEGIN SELECT RAISE(ABORT, 'a charger password only ever gets an earlier end'); END;
`;
