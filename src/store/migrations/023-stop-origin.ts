/**
 * Schema for who asked a session to stop (appended after the schemas before it; never edited once
 * released).
 * - session_stop_requests: one row per session the gateway asked to stop, written with its move
 *   to 'stopping': the paid-energy limit, or an operator (id, and the name at the time). A session
 *   the charger ended by itself has none; its end reason says who.
 */
export const migrationStopOrigin = `
CREATE TABLE IF NOT EXISTS session_stop_requests (
  session_id TEXT PRIMARY KEY REFERENCES sessions(id),
  origin TEXT NOT NULL CHECK (origin IN ('paid_energy', 'operator')),
  operator_id TEXT,
  operator_name TEXT,
  CHECK ((origin = 'operator') = (operator_id IS NOT NULL))
) STRICT;
`;
