/**
 * The operator's availability intent per connector ('*': the whole charger). It outlives the
 * charger's own state: re-sent whenever the charger boots, and checked before every Start.
 */
export const migrationOperatorAvailability = `
CREATE TABLE operator_availability (
  charger_id TEXT NOT NULL,
  connector_id TEXT NOT NULL,
  operative INTEGER NOT NULL CHECK (operative IN (0, 1)),
  reason TEXT,
  set_by TEXT NOT NULL,
  set_at TEXT NOT NULL,
  PRIMARY KEY (charger_id, connector_id)
) STRICT;
`;
