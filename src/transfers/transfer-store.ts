import type { Db } from '../store/database.js';
import type { FirmwareSigning, TransferFile, TransferJob, TransferKind } from './transfer.js';

export type { FirmwareSigning, TransferFile, TransferJob, TransferKind } from './transfer.js';

/** What deleting a file came to. */
export type FileDeletion = 'deleted' | 'in_use' | 'not_found';

export interface JobStatus {
  status: string;
  detail: string | null;
  at: string;
}

interface JobRow {
  job_id: number;
  charger_id: string;
  kind: TransferKind;
  firmware_file_id: string | null;
  log_file_id: string | null;
  status: string;
  finished: number;
  requested_by: string;
  requested_at: string;
  updated_at: string;
  token_expires_at: string;
  retrieve_at: string | null;
}

interface FileRow {
  file_id: string;
  kind: TransferKind;
  name: string;
  size_bytes: number;
  sha256: string;
  charger_id: string | null;
  job_id: number | null;
  created_by: string;
  created_at: string;
  signing_certificate: string | null;
  signature: string | null;
}

const jobOf = (r: JobRow): TransferJob => ({
  jobId: r.job_id,
  chargerId: r.charger_id,
  kind: r.kind,
  firmwareFileId: r.firmware_file_id,
  logFileId: r.log_file_id,
  status: r.status,
  finished: r.finished === 1,
  requestedBy: r.requested_by,
  requestedAt: r.requested_at,
  updatedAt: r.updated_at,
  urlExpiresAt: r.token_expires_at,
  retrieveAt: r.retrieve_at,
});

const fileOf = (r: FileRow): TransferFile => ({
  fileId: r.file_id,
  kind: r.kind,
  name: r.name,
  sizeBytes: r.size_bytes,
  sha256: r.sha256,
  chargerId: r.charger_id,
  jobId: r.job_id,
  createdBy: r.created_by,
  createdAt: r.created_at,
  signed: r.signature !== null,
});

/** An unfinished job names the file: it is kept (migrations/025-transfer-upkeep.ts). */
const IN_USE = `EXISTS (SELECT 1 FROM transfer_jobs j WHERE j.finished = 0
  AND (j.firmware_file_id = f.file_id OR j.log_file_id = f.file_id))`;

/**
 * The transfer tables (migrations/021-transfers.ts, 025-transfer-upkeep.ts): files, jobs and each
 * job's statuses. A deleted file keeps its row (jobs name it) but is no longer listed or served.
 */
export class TransferStore {
  constructor(private readonly db: Db) {}

  addFile(file: TransferFile, signing: FirmwareSigning | null = null): void {
    this.db
      .prepare(
        `INSERT INTO transfer_files (file_id, kind, name, size_bytes, sha256, charger_id, job_id,
           created_by, created_at, signing_certificate, signature)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        file.fileId,
        file.kind,
        file.name,
        file.sizeBytes,
        file.sha256,
        file.chargerId,
        file.jobId,
        file.createdBy,
        file.createdAt,
        signing?.signingCertificate ?? null,
        signing?.signature ?? null,
      );
  }

  /** A file that is kept (not deleted). */
  file(fileId: string): TransferFile | undefined {
    const row = this.db
      .prepare('SELECT * FROM transfer_files WHERE file_id = ? AND deleted_at IS NULL')
      .get(fileId) as FileRow | undefined;
    return row && fileOf(row);
  }

  files(kind: TransferKind, limit: number): TransferFile[] {
    const rows = this.db
      .prepare(
        `SELECT * FROM transfer_files WHERE kind = ? AND deleted_at IS NULL
         ORDER BY created_at DESC LIMIT ?`,
      )
      .all(kind, limit) as FileRow[];
    return rows.map(fileOf);
  }

  signing(fileId: string): FirmwareSigning | null {
    const row = this.db
      .prepare('SELECT signing_certificate, signature FROM transfer_files WHERE file_id = ?')
      .get(fileId) as Pick<FileRow, 'signing_certificate' | 'signature'> | undefined;
    if (!row || row.signing_certificate === null || row.signature === null) return null;
    return { signingCertificate: row.signing_certificate, signature: row.signature };
  }

  /** Marks a file deleted (its bytes are the caller's to remove); never one a job still uses. */
  deleteFile(fileId: string, by: string, at: string): FileDeletion {
    const inUse = this.db
      .prepare(`SELECT ${IN_USE} AS used FROM transfer_files f WHERE f.file_id = ?`)
      .get(fileId) as { used: number } | undefined;
    if (!inUse) return 'not_found';
    if (inUse.used === 1) return 'in_use';
    const { changes } = this.db
      .prepare(
        `UPDATE transfer_files SET deleted_at = ?, deleted_by = ?
         WHERE file_id = ? AND deleted_at IS NULL`,
      )
      .run(at, by, fileId);
    return changes === 1 ? 'deleted' : 'not_found';
  }

  /**
   * Kept files of a kind last used before `before`, that no unfinished job uses: a log's use is
   * its upload, a firmware file's the latest job sent with it (else its upload).
   */
  unusedSince(kind: TransferKind, before: string, limit: number): string[] {
    const rows = this.db
      .prepare(
        `SELECT f.file_id FROM transfer_files f
         WHERE f.kind = ? AND f.deleted_at IS NULL AND NOT ${IN_USE}
           AND max(f.created_at, coalesce((SELECT max(j.requested_at) FROM transfer_jobs j
                                            WHERE j.firmware_file_id = f.file_id), '')) < ?
         ORDER BY f.created_at LIMIT ?`,
      )
      .all(kind, before, limit) as { file_id: string }[];
    return rows.map((r) => r.file_id);
  }

  /** A new job, its first status `Requested`. */
  createJob(job: {
    chargerId: string;
    kind: TransferKind;
    firmwareFileId: string | null;
    tokenSha256: string;
    urlExpiresAt: string;
    retrieveAt: string | null;
    requestedBy: string;
    at: string;
  }): number {
    return this.db.transaction(() => {
      const { lastInsertRowid } = this.db
        .prepare(
          `INSERT INTO transfer_jobs (charger_id, kind, firmware_file_id, token_sha256, token_expires_at,
             retrieve_at, status, requested_by, requested_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, 'Requested', ?, ?, ?)`,
        )
        .run(
          job.chargerId,
          job.kind,
          job.firmwareFileId,
          job.tokenSha256,
          job.urlExpiresAt,
          job.retrieveAt,
          job.requestedBy,
          job.at,
          job.at,
        );
      const jobId = Number(lastInsertRowid);
      this.addStatus(jobId, 'Requested', null, job.at);
      return jobId;
    })();
  }

  /**
   * Adds to the job's history and makes it the latest status, unless `over` names the only status
   * it may replace (the charger's first notification can overtake its reply to our call).
   */
  setStatus(
    jobId: number,
    change: { status: string; detail: string | null; at: string; finished: boolean; over?: string },
  ): void {
    this.db.transaction(() => {
      this.db
        .prepare(
          `UPDATE transfer_jobs SET status = @status, finished = max(finished, @finished), updated_at = @at
           WHERE job_id = @jobId AND (@over IS NULL OR status = @over)`,
        )
        .run({
          jobId,
          status: change.status,
          finished: change.finished ? 1 : 0,
          at: change.at,
          over: change.over ?? null,
        });
      this.addStatus(jobId, change.status, change.detail, change.at);
    })();
  }

  /**
   * Ends an unfinished job with a status of the gateway's own (Cancelled, TimedOut); false when
   * it had finished already.
   */
  endJob(jobId: number, change: { status: string; detail: string; at: string }): boolean {
    return this.db.transaction(() => {
      const { changes } = this.db
        .prepare(
          `UPDATE transfer_jobs SET status = ?, finished = 1, updated_at = ?
           WHERE job_id = ? AND finished = 0`,
        )
        .run(change.status, change.at, jobId);
      if (changes === 1) this.addStatus(jobId, change.status, change.detail, change.at);
      return changes === 1;
    })();
  }

  /** A report that no longer moves its job (the gateway ended it): kept in its history only. */
  addLateReport(jobId: number, status: string, at: string): void {
    this.addStatus(jobId, status, 'after the gateway ended the job', at);
  }

  /** Unfinished jobs with no news since `before` (a firmware job counts from its retrieve time). */
  silentSince(before: string, limit: number): number[] {
    const rows = this.db
      .prepare(
        `SELECT job_id FROM transfer_jobs
         WHERE finished = 0 AND updated_at < @before AND coalesce(retrieve_at, '') < @before
         ORDER BY job_id LIMIT @limit`,
      )
      .all({ before, limit }) as { job_id: number }[];
    return rows.map((r) => r.job_id);
  }

  /** A received log: the file, and the job it answers; false (nothing kept) when the job has one. */
  attachLog(jobId: number, file: TransferFile): boolean {
    const taken = new Error('log already attached');
    try {
      this.db.transaction(() => {
        this.addFile(file);
        const { changes } = this.db
          .prepare(
            'UPDATE transfer_jobs SET log_file_id = ? WHERE job_id = ? AND log_file_id IS NULL',
          )
          .run(file.fileId, jobId);
        if (changes !== 1) throw taken;
      })();
      return true;
    } catch (err) {
      if (err === taken) return false;
      throw err;
    }
  }

  job(jobId: number): TransferJob | undefined {
    const row = this.db.prepare('SELECT * FROM transfer_jobs WHERE job_id = ?').get(jobId) as
      JobRow | undefined;
    return row && jobOf(row);
  }

  byToken(tokenSha256: string): TransferJob | undefined {
    const row = this.db
      .prepare('SELECT * FROM transfer_jobs WHERE token_sha256 = ?')
      .get(tokenSha256) as JobRow | undefined;
    return row && jobOf(row);
  }

  /** The charger's latest unfinished job of a kind: what a 1.6 notification (no requestId) is about. */
  latestOpen(chargerId: string, kind: TransferKind): TransferJob | undefined {
    const row = this.db
      .prepare(
        `SELECT * FROM transfer_jobs WHERE charger_id = ? AND kind = ? AND finished = 0
         ORDER BY job_id DESC LIMIT 1`,
      )
      .get(chargerId, kind) as JobRow | undefined;
    return row && jobOf(row);
  }

  jobs(filter: { chargerId?: string; kind?: TransferKind; limit: number }): TransferJob[] {
    const rows = this.db
      .prepare(
        `SELECT * FROM transfer_jobs
         WHERE (@chargerId IS NULL OR charger_id = @chargerId) AND (@kind IS NULL OR kind = @kind)
         ORDER BY job_id DESC LIMIT @limit`,
      )
      .all({
        chargerId: filter.chargerId ?? null,
        kind: filter.kind ?? null,
        limit: filter.limit,
      }) as JobRow[];
    return rows.map(jobOf);
  }

  history(jobId: number): JobStatus[] {
    return this.db
      .prepare('SELECT status, detail, at FROM transfer_job_statuses WHERE job_id = ? ORDER BY seq')
      .all(jobId) as JobStatus[];
  }

  private addStatus(jobId: number, status: string, detail: string | null, at: string): void {
    this.db
      .prepare('INSERT INTO transfer_job_statuses (job_id, status, detail, at) VALUES (?, ?, ?, ?)')
      .run(jobId, status, detail, at);
  }
}
