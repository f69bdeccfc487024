/**
 * Schema for chargers whose meter is not sampled during a transaction at the interval the gateway
 * asked for (appended after the schemas before it; never edited once released).
 * - charger_sampling: one row per such charger, with why (a RebootRequired answer, a value read
 *   back other than the one set, an interval of 0). A Start there is refused until a later read
 *   shows the interval held, which deletes the row. Kept across a gateway restart: a charger
 *   that reconnects without booting is not read again.
 */
export const schemaChargerSampling = `
CREATE TABLE IF NOT EXISTS charger_sampling (
  charger_id TEXT PRIMARY KEY,
  reason TEXT NOT NULL,
  recorded_at TEXT NOT NULL
) STRICT;
`;
