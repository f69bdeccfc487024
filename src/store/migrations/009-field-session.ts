/**
 * What the session lifecycle needs for chargers in the field.
 * - `meter_last_at_ms`: when the last counted register was received (the gateway's clock,
 *   ms). A register gain is only counted when the connector's maximum power could
 *   have delivered it since then (meter-track.ts); null for rows from before (no bound until the
 *   next reading).
 * - `stop_attempts`: each step of the stop ladder sent for a session (stop-assurance.ts) and the
 *   charger's reply, for the operator to see which chargers ignore a stop and what ended them.
 * - `operator_losses`: energy the operator delivered and cannot bill: beyond the paid energy (a
 *   charger that did not stop in time) or proven by a stop that came after the session was settled
 *   without one. Append-only; money never moves for it (a settled session never changes).
 */
export const migrationFieldSession = `
ALTER TABLE sessions ADD COLUMN meter_last_at_ms INTEGER;
CREATE TABLE stop_attempts (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  step TEXT NOT NULL CHECK (step IN ('remote_stop', 'zero_power', 'inoperative', 'unlock')),
  sent_at TEXT NOT NULL,
  reply TEXT NOT NULL CHECK (reply IN ('accepted', 'rejected', 'not_supported', 'no_answer', 'offline'))
) STRICT;
CREATE INDEX stop_attempts_session ON stop_attempts(session_id);
CREATE TABLE operator_losses (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  wh INTEGER NOT NULL CHECK (wh > 0),
  reason TEXT NOT NULL CHECK (reason IN ('beyond_paid', 'after_settlement')),
  at TEXT NOT NULL
) STRICT;
CREATE INDEX operator_losses_session ON operator_losses(session_id);
CREATE TRIGGER stop_attempts_append_only BEFORE UPDATE ON stop_attempts
BEGIN SELECT RAISE(ABORT, 'stop attempts are never changed'); END;
CREATE TRIGGER operator_losses_append_only BEFORE UPDATE ON operator_losses
BEGIN SELECT RAISE(ABORT, 'operator losses are never changed'); END;
CREATE TRIGGER operator_losses_no_delete BEFORE DELETE ON operator_losses
BEGIN SELECT RAISE(ABORT, 'operator losses are never deleted'); END;
`;
