/**
 * Schema for each charger's clock offset (appended after the schemas before it; never edited once
 * released). One row per charger: our clock − its clock (ms) as last estimated
 * (src/ocpp/charger-state/charger-clocks.ts), so a restarted gateway judges a queue the charger replays against
 * the offset it had, not against the first late message.
 */
export const migrationClockOffsets = `
CREATE TABLE IF NOT EXISTS charger_clock_offsets (
  charger_id TEXT PRIMARY KEY,
  offset_ms INTEGER NOT NULL,
  estimated_at TEXT NOT NULL
) STRICT;
`;
