/**
 * Taps that pay from the wallet (docs/driver-tokens.md, docs/money.md "A tap pays").
 * - sessions.started_offline: the charger started the session's transaction from its local list
 *   while its link was down and reported it late; such a session is billed for what was delivered
 *   at settlement, up to the wallet's balance (a further debit, its own ledger entry).
 * - operator_losses takes a fourth reason, 'offline_unpaid': energy an offline start delivered that
 *   its driver's wallet could not pay. SQLite cannot change a CHECK in place: the table is rebuilt
 *   with its rows, index and append-only triggers (nothing references it).
 */
export const migrationTaps = `
ALTER TABLE sessions ADD COLUMN started_offline INTEGER NOT NULL DEFAULT 0
  CHECK (started_offline IN (0, 1));
CREATE TABLE operator_losses_v3 (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  wh INTEGER NOT NULL CHECK (wh > 0),
  reason TEXT NOT NULL CHECK (reason IN ('beyond_paid', 'after_settlement', 'unproven', 'offline_unpaid')),
  at TEXT NOT NULL
) STRICT;
INSERT INTO operator_losses_v3 (id, session_id, wh, reason, at)
  SELECT id, session_id, wh, reason, at FROM operator_losses;
DROP TABLE operator_losses;
ALTER TABLE operator_losses_v3 RENAME TO operator_losses;
CREATE INDEX operator_losses_session ON operator_losses(session_id);
CREATE TRIGGER operator_losses_append_only BEFORE UPDATE ON operator_losses
BEGIN SELECT RAISE(ABORT, 'operator losses are never changed'); END;
CREATE TRIGGER operator_losses_no_delete BEFORE DELETE ON operator_losses
BEGIN SELECT RAISE(ABORT, 'operator losses are never deleted'); END;
`;
