/**
 * Schema for the energy a session may have delivered (appended after the schemas before it; never
 * edited once released; docs/money.md "Proven and possible energy").
 * - sessions.meter_possible_wh: the most energy the session may have delivered, doubted readings
 *   included (each bounded by what the connector could deliver in the time): what the paid-energy
 *   stop is planned on. What is billed stays the proven energy (the register track).
 * - sessions.meter_gap_wh: energy no reading can ever prove (the gap around a register reset),
 *   added to the proven energy for the stop from then on.
 * - operator_losses takes a third reason, 'unproven': energy a session may have delivered beyond
 *   what its readings proved, recorded at settlement. SQLite cannot change a CHECK in place: the
 *   table is rebuilt with its rows, index and append-only triggers.
 */
export const migrationMeterTruth = `
ALTER TABLE sessions ADD COLUMN meter_possible_wh INTEGER CHECK (meter_possible_wh >= 0);
ALTER TABLE sessions ADD COLUMN meter_gap_wh INTEGER NOT NULL DEFAULT 0 CHECK (meter_gap_wh >= 0);
CREATE TABLE operator_losses_v2 (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  wh INTEGER NOT NULL CHECK (wh > 0),
  reason TEXT NOT NULL CHECK (reason IN ('beyond_paid', 'after_settlement', 'unproven')),
  at TEXT NOT NULL
) STRICT;
INSERT INTO operator_losses_v2 (id, session_id, wh, reason, at)
  SELECT id, session_id, wh, reason, at FROM operator_losses;
DROP TABLE operator_losses;
ALTER TABLE operator_losses_v2 RENAME TO operator_losses;
CREATE INDEX operator_losses_session ON operator_losses(session_id);
CREATE TRIGGER operator_losses_append_only BEFORE UPDATE ON operator_losses
BEGIN SELECT RAISE(ABORT, 'operator losses are never changed'); END;
CREATE TRIGGER operator_losses_no_delete BEFORE DELETE ON operator_losses
BEGIN SELECT RAISE(ABORT, 'operator losses are never deleted'); END;
`;
