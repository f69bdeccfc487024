/**
 * Tariffs managed at run time (appended after the schemas before it; never edited once released).
 * - tariff_versions: every version of every tariff, append-only (a change is a new version, a
 *   deletion a version without a spec), so the price a session recorded can always be traced to
 *   the exact tariff it was read from. The current tariff is its highest version.
 * - sessions.tariff_*: the tariff, version and time-of-day window a session's price (fixed at its
 *   Start, price_micro_ngn_per_wh) was read from; null for sessions started before.
 */
export const migrationTariffs = `
CREATE TABLE tariff_versions (
  tariff_id TEXT NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1),
  spec TEXT CHECK (spec IS NULL OR json_valid(spec)),
  set_by TEXT NOT NULL,
  set_at TEXT NOT NULL,
  PRIMARY KEY (tariff_id, version)
) STRICT;
CREATE TRIGGER tariff_versions_append_only_update BEFORE UPDATE ON tariff_versions
BEGIN SELECT RAISE(ABORT, 'tariff_versions is append-only'); END;
CREATE TRIGGER tariff_versions_append_only_delete BEFORE DELETE ON tariff_versions
BEGIN SELECT RAISE(ABORT, 'tariff_versions is append-only'); END;
ALTER TABLE sessions ADD COLUMN tariff_id TEXT;
ALTER TABLE sessions ADD COLUMN tariff_version INTEGER;
ALTER TABLE sessions ADD COLUMN tariff_window TEXT;
`;
