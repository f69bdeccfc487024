/**
 * Schema for chargers that do not sample a transaction's energy as the gateway asked (appended
 * after the schemas before it; never edited once released).
 * - charger_sampling: one row per such charger, with why (a RebootRequired answer, an interval
 *   read back as 0 or longer than asked). A Start there is refused until a later read shows the
 *   setting held, which deletes the row. Kept across a gateway restart: a charger that reconnects
 *   without booting is not read again.
 */
export const migrationChargerSampling = `
CREATE TABLE IF NOT EXISTS charger_sampling (
  charger_id TEXT PRIMARY KEY,
  reason TEXT NOT NULL,
  recorded_at TEXT NOT NULL
) STRICT;
`;
