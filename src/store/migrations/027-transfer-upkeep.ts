/**
 * Transfers that end and files that go: a firmware file's signing certificate and signature (sent
 * with every update of it), a file's deletion (by an operator or retention; the row stays, so a
 * job's history still names it, the bytes go), and a firmware job's retrieve time (a job's timeout
 * counts from it). The triggers keep what a job still uses: no file an unfinished job names is
 * deleted, no job is made on a deleted file, and a file is signed whole or not at all.
 */
export const migrationTransferUpkeep = `
ALTER TABLE transfer_files ADD COLUMN signing_certificate TEXT;
ALTER TABLE transfer_files ADD COLUMN signature TEXT;
ALTER TABLE transfer_files ADD COLUMN deleted_at TEXT;
ALTER TABLE transfer_files ADD COLUMN deleted_by TEXT;
ALTER TABLE transfer_jobs ADD COLUMN retrieve_at TEXT;

CREATE TRIGGER transfer_files_signed_whole BEFORE INSERT ON transfer_files
WHEN (NEW.signing_certificate IS NULL) <> (NEW.signature IS NULL)
  OR (NEW.signature IS NOT NULL AND NEW.kind <> 'firmware')
BEGIN
  SELECT RAISE(ABORT, 'a signed file is firmware with both a signing certificate and a signature');
END;

CREATE TRIGGER transfer_files_kept_while_used BEFORE UPDATE OF deleted_at ON transfer_files
WHEN NEW.deleted_at IS NOT NULL AND EXISTS (
  SELECT 1 FROM transfer_jobs j
   WHERE j.finished = 0 AND (j.firmware_file_id = NEW.file_id OR j.log_file_id = NEW.file_id))
BEGIN
  SELECT RAISE(ABORT, 'transfer file in use by an unfinished job');
END;

CREATE TRIGGER transfer_jobs_on_kept_files BEFORE INSERT ON transfer_jobs
WHEN NEW.firmware_file_id IS NOT NULL AND EXISTS (
  SELECT 1 FROM transfer_files f WHERE f.file_id = NEW.firmware_file_id AND f.deleted_at IS NOT NULL)
BEGIN
  SELECT RAISE(ABORT, 'transfer file deleted');
END;

CREATE INDEX transfer_jobs_open ON transfer_jobs (finished, updated_at);
`;
