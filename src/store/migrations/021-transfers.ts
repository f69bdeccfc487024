/**
 * Firmware and log transfers: the files (firmware an operator uploaded, logs chargers sent), and
 * one job per UpdateFirmware / GetDiagnostics / GetLog (its id is the OCPP requestId) with the
 * latest status the charger reported and every status before it. The URL token is kept as a hash.
 */
export const migrationTransfers = `
CREATE TABLE transfer_files (
  file_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('firmware', 'log')),
  name TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  charger_id TEXT,
  job_id INTEGER,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX transfer_files_kind ON transfer_files (kind, created_at);

CREATE TABLE transfer_jobs (
  job_id INTEGER PRIMARY KEY,
  charger_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('firmware', 'log')),
  firmware_file_id TEXT REFERENCES transfer_files (file_id),
  log_file_id TEXT REFERENCES transfer_files (file_id),
  token_sha256 TEXT NOT NULL UNIQUE,
  token_expires_at TEXT NOT NULL,
  status TEXT NOT NULL,
  finished INTEGER NOT NULL DEFAULT 0 CHECK (finished IN (0, 1)),
  requested_by TEXT NOT NULL,
  requested_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX transfer_jobs_charger ON transfer_jobs (charger_id, kind, job_id);

CREATE TABLE transfer_job_statuses (
  seq INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL REFERENCES transfer_jobs (job_id),
  status TEXT NOT NULL,
  detail TEXT,
  at TEXT NOT NULL
) STRICT;
CREATE INDEX transfer_job_statuses_job ON transfer_job_statuses (job_id, seq);
`;
