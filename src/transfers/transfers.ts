import { createHash, randomBytes } from 'node:crypto';
import type { ReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { SiteDirectory } from '../config/site.js';
import {
  ChargerOfflineError,
  ChargerTimeoutError,
  type ChargerCommands,
  type ChargerOperations,
  type ChargerReply,
  type TransferStatus,
} from '../ocpp/port.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import { uuid7 } from '../shared/uuid7.js';
import { TooLargeError, type FileArea } from './file-area.js';
import { TransferError } from './errors.js';
import { FileKeeping } from './file-keeping.js';
import { signatureVerifies } from './firmware-signing.js';
import type {
  FirmwareSigning,
  JobStatus,
  TransferFile,
  TransferJob,
  TransferKind,
  TransferStore,
} from './transfer-store.js';

export interface TransferSettings {
  maxFirmwareBytes: number;
  maxLogBytes: number;
  tokenMinutes: number;
  retries: number;
  retryIntervalSeconds: number;
  /** A job with no word from its charger this long (from its retrieve time) ends `TimedOut`. */
  jobTimeoutMinutes: number;
}

export interface TransfersDeps {
  store: TransferStore;
  area: FileArea;
  clock: Clock;
  log: Logger;
  site: SiteDirectory;
  chargers: Pick<ChargerOperations, 'updateFirmware' | 'requestLog'> &
    Pick<ChargerCommands, 'isOnline' | 'connector'>;
  /** Ids of the charger's open sessions (authorizing to stopping). */
  openSessions: (chargerId: string) => string[];
  /** The base URL chargers reach the gateway's transfer routes at. */
  baseUrl: () => string;
  settings: TransferSettings;
  /** Optional: told of every job status (the console's live feed). */
  onJobChange?: (job: TransferJob) => void;
}

/** A job as an operator's command answers it: the job and the charger's own reply. */
export interface JobAnswer {
  job: TransferJob;
  /** The charger's status word (`CallError` for a CALLERROR). */
  status: string;
  accepted: boolean;
  reply: unknown;
}

/** The route prefix chargers fetch firmware from and upload logs to (outside /admin/v1). */
export const TRANSFER_PREFIX = '/transfers';

/** Statuses after which the charger does no more for the job. */
const FINAL: Record<TransferKind, ReadonlySet<string>> = {
  firmware: new Set([
    'Installed',
    'DownloadFailed',
    'InstallationFailed',
    'InstallVerificationFailed',
    'InvalidSignature',
  ]),
  log: new Set([
    'Uploaded',
    'UploadFailed',
    'UploadFailure',
    'BadMessage',
    'NotSupportedOperation',
    'PermissionDenied',
    'AcceptedCanceled',
  ]),
};
/** Connector states that mean a transaction runs there, whoever started it. */
const IN_USE = new Set(['charging', 'suspended']);
const TAKEN = new Set(['Accepted', 'AcceptedCanceled']);
/** Statuses the gateway ends a job with: its URL is no longer served, later reports only noted. */
export const CANCELLED = 'Cancelled';
export const TIMED_OUT = 'TimedOut';
const ENDED_BY_GATEWAY = new Set([CANCELLED, TIMED_OUT]);

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** What of a URL token may be logged: enough to tell two apart, too little to use. */
export const tokenHint = (token: string) => `${token.slice(0, 6)}…`;

/** A name a charger or operator gave a file, reduced to what is safe in a URL and a header. */
export function safeName(name: string | null | undefined, fallback: string): string {
  const cleaned = (name ?? '').replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  return cleaned.slice(0, 100) || fallback;
}

/**
 * Firmware and logs over the site LAN. Operators upload firmware files; a job sends a charger
 * UpdateFirmware or GetDiagnostics/GetLog with a URL on the gateway that carries a random token:
 * good for that one job and purpose (a firmware token only downloads its file, a log token only
 * takes one upload) until it expires. The charger's status notifications move the job along.
 */
export class Transfers {
  /** Firmware downloads under way, per job: cut when the job is cancelled or times out. */
  private readonly downloads = new Map<number, Set<ReadStream>>();
  /** Deleting files, by an operator or retention. */
  readonly keeping: FileKeeping;

  constructor(private readonly deps: TransfersDeps) {
    this.keeping = new FileKeeping(deps.store, deps.area, deps.clock);
  }

  /**
   * Stores an operator's firmware file. A signed one (its signing already read at the edge) is
   * kept only if the signature verifies over the bytes with the certificate's key: a charger
   * would refuse it after a download (InvalidSignature), an operator should hear it now.
   */
  async addFirmware(
    body: Readable | Buffer,
    name: string,
    by: string,
    signing: FirmwareSigning | null = null,
  ): Promise<TransferFile> {
    const fileId = uuid7(this.deps.clock.now());
    const bytes = await this.stored('firmware', fileId, body, this.deps.settings.maxFirmwareBytes);
    if (
      signing !== null &&
      !(await signatureVerifies(this.deps.area.read('firmware', fileId), signing))
    ) {
      this.deps.area.remove('firmware', fileId);
      throw new TransferError(
        'invalid_signature',
        'the signature does not verify over the file with the signing certificate’s key (RSA or ECDSA over SHA-256, -384 or -512); nothing was kept',
      );
    }
    const file: TransferFile = {
      fileId,
      kind: 'firmware',
      name: safeName(name, 'firmware.bin'),
      ...bytes,
      chargerId: null,
      jobId: null,
      createdBy: by,
      createdAt: this.nowIso(),
      signed: signing !== null,
    };
    this.deps.store.addFile(file, signing);
    return file;
  }

  /**
   * Refused (409 charger_busy) while a session is open on the charger or a connector reports a
   * transaction: nothing is queued, the operator asks again once the charger is free.
   */
  async updateFirmware(
    chargerId: string,
    fileId: string,
    by: string,
    retrieveAt?: string,
  ): Promise<JobAnswer> {
    this.charger(chargerId);
    const file = this.deps.store.file(fileId);
    if (!file || file.kind !== 'firmware') {
      throw new TransferError('file_not_found', `no firmware file with id ${fileId}`);
    }
    this.refuseBusy(chargerId);
    this.refuseOffline(chargerId);
    const fromMs = retrieveAt === undefined ? this.deps.clock.now() : Date.parse(retrieveAt);
    const { jobId, token } = this.createJob(chargerId, 'firmware', file.fileId, by, fromMs);
    const location = `${this.deps.baseUrl()}${TRANSFER_PREFIX}/firmware/${token}/${file.name}`;
    return this.send(jobId, chargerId, () =>
      this.deps.chargers.updateFirmware(chargerId, {
        requestId: jobId,
        location,
        retrieveAt: new Date(fromMs).toISOString(),
        retries: this.deps.settings.retries,
        retryIntervalSeconds: this.deps.settings.retryIntervalSeconds,
        signing: this.deps.store.signing(file.fileId),
      }),
    );
  }

  async requestLog(chargerId: string, by: string): Promise<JobAnswer> {
    this.charger(chargerId);
    this.refuseOffline(chargerId);
    const { jobId, token } = this.createJob(chargerId, 'log', null, by, this.deps.clock.now());
    const location = `${this.deps.baseUrl()}${TRANSFER_PREFIX}/logs/${token}`;
    return this.send(jobId, chargerId, () =>
      this.deps.chargers.requestLog(chargerId, {
        requestId: jobId,
        location,
        retries: this.deps.settings.retries,
        retryIntervalSeconds: this.deps.settings.retryIntervalSeconds,
      }),
    );
  }

  /** A status notification: the job it names (2.0.1), else the charger's latest open one (1.6). */
  statusReported(chargerId: string, report: TransferStatus): void {
    const named = report.requestId === null ? undefined : this.deps.store.job(report.requestId);
    const job =
      named && named.chargerId === chargerId && named.kind === report.kind
        ? named
        : this.deps.store.latestOpen(chargerId, report.kind);
    if (!job) {
      this.deps.log.info(
        { chargerId, kind: report.kind, status: report.status, requestId: report.requestId },
        'transfer status for no job of the gateway',
      );
      return;
    }
    // Some chargers repeat a status every few seconds (EVerest libocpp #459): kept once.
    if (report.status === job.status) return;
    if (ENDED_BY_GATEWAY.has(job.status)) {
      this.deps.store.addLateReport(job.jobId, report.status, this.nowIso());
      return;
    }
    this.setStatus(job.jobId, report.status, null, FINAL[report.kind].has(report.status));
  }

  /** The firmware file a download URL names (404 for any token that is not a live firmware one). */
  download(token: string): { file: TransferFile; stream: ReadStream } {
    const job = this.liveJob(token, 'firmware');
    const file = job.firmwareFileId === null ? undefined : this.deps.store.file(job.firmwareFileId);
    if (!file) throw new TransferError('not_found', 'no such transfer');
    this.deps.log.info(
      { chargerId: job.chargerId, jobId: job.jobId, token: tokenHint(token) },
      'firmware download',
    );
    const stream = this.deps.area.read('firmware', file.fileId);
    const under = this.downloads.get(job.jobId) ?? new Set<ReadStream>();
    this.downloads.set(job.jobId, under.add(stream));
    stream.once('close', () => {
      under.delete(stream);
      if (under.size === 0) this.downloads.delete(job.jobId);
    });
    return { file, stream };
  }

  private abortDownloads(jobId: number): void {
    for (const stream of this.downloads.get(jobId) ?? []) {
      stream.destroy(new Error(`transfer job ${jobId} ended`));
    }
  }

  /** Refuses an upload URL that cannot take a log now, before its body is read. */
  checkUpload(token: string): void {
    const job = this.liveJob(token, 'log');
    if (job.logFileId !== null) {
      throw new TransferError('already_uploaded', 'this upload URL has been used');
    }
  }

  /** A log upload to its URL: kept once; a second upload to the same URL is refused. */
  async receiveLog(
    token: string,
    body: Readable | Buffer,
    nameHint: string | null,
  ): Promise<TransferFile> {
    this.checkUpload(token);
    const job = this.liveJob(token, 'log');
    const fileId = uuid7(this.deps.clock.now());
    const bytes = await this.stored('log', fileId, body, this.deps.settings.maxLogBytes);
    const file: TransferFile = {
      fileId,
      kind: 'log',
      name: safeName(nameHint, `${safeName(job.chargerId, 'charger')}-${job.jobId}.log`),
      ...bytes,
      chargerId: job.chargerId,
      jobId: job.jobId,
      createdBy: job.chargerId,
      createdAt: this.nowIso(),
      signed: false,
    };
    if (!this.deps.store.attachLog(job.jobId, file)) {
      // Another upload to the same URL finished first.
      this.deps.area.remove('log', fileId);
      throw new TransferError('already_uploaded', 'this upload URL has been used');
    }
    this.deps.log.info(
      {
        chargerId: job.chargerId,
        jobId: job.jobId,
        bytes: file.sizeBytes,
        token: tokenHint(token),
      },
      'log received',
    );
    return file;
  }

  /**
   * Cancels an unfinished job: its URL is no longer served (a download under way is cut, a later
   * one or an upload answered 410) and it ends `Cancelled`. Nothing is sent: OCPP has no call
   * that cancels an update or an upload, so the charger learns it from the failed transfer.
   */
  cancel(jobId: number, by: string): TransferJob {
    const job = this.deps.store.job(jobId);
    if (!job) throw new TransferError('job_not_found', `no job ${jobId}`);
    const ended = this.deps.store.endJob(jobId, {
      status: CANCELLED,
      detail: `by ${by}`,
      at: this.nowIso(),
    });
    if (!ended)
      throw new TransferError('job_finished', `job ${jobId} has finished (${job.status})`);
    this.deps.log.info({ chargerId: job.chargerId, jobId, by }, 'transfer job cancelled');
    this.abortDownloads(jobId);
    return this.changed(jobId);
  }

  /**
   * Ends every unfinished job whose charger has said nothing for `jobTimeoutMinutes` (counted
   * from the later of its last status and its retrieve time). Run at start-up and then each
   * minute, so a restart does not keep a job open.
   */
  timeOutSilentJobs(): number {
    const minutes = this.deps.settings.jobTimeoutMinutes;
    const before = new Date(this.deps.clock.now() - minutes * 60_000).toISOString();
    let ended = 0;
    for (const jobId of this.deps.store.silentSince(before, 1000)) {
      const detail = `no word from the charger for ${minutes} minutes`;
      // A report may have ended it since the query: then it is not ours to end.
      if (!this.deps.store.endJob(jobId, { status: TIMED_OUT, detail, at: this.nowIso() })) {
        continue;
      }
      ended += 1;
      this.abortDownloads(jobId);
      const job = this.changed(jobId);
      this.deps.log.warn({ chargerId: job.chargerId, jobId }, 'transfer job timed out');
    }
    return ended;
  }

  files(kind: TransferKind, limit: number): TransferFile[] {
    return this.deps.store.files(kind, limit);
  }

  jobs(filter: { chargerId?: string; kind?: TransferKind; limit: number }): TransferJob[] {
    return this.deps.store.jobs(filter);
  }

  jobWithHistory(jobId: number): { job: TransferJob; history: JobStatus[] } | undefined {
    const job = this.deps.store.job(jobId);
    return job && { job, history: this.deps.store.history(jobId) };
  }

  file(fileId: string): TransferFile | undefined {
    return this.deps.store.file(fileId);
  }

  readFile(file: TransferFile): ReadStream {
    return this.deps.area.read(file.kind, file.fileId);
  }

  private createJob(
    chargerId: string,
    kind: TransferKind,
    firmwareFileId: string | null,
    by: string,
    fromMs: number,
  ): { jobId: number; token: string } {
    const token = randomBytes(32).toString('base64url');
    // From the later of the retrieve time and now: a retrieve time in the past must not leave a
    // charger that retries a URL already expired, nor one far ahead a URL dead before it is used.
    const expiresMs =
      Math.max(fromMs, this.deps.clock.now()) + this.deps.settings.tokenMinutes * 60_000;
    const jobId = this.deps.store.createJob({
      chargerId,
      kind,
      firmwareFileId,
      tokenSha256: sha256(token),
      urlExpiresAt: new Date(expiresMs).toISOString(),
      retrieveAt: kind === 'firmware' ? new Date(fromMs).toISOString() : null,
      requestedBy: by,
      at: this.nowIso(),
    });
    return { jobId, token };
  }

  private async send(
    jobId: number,
    chargerId: string,
    call: () => Promise<ChargerReply>,
  ): Promise<JobAnswer> {
    let reply: ChargerReply;
    try {
      reply = await call();
    } catch (err) {
      if (err instanceof ChargerTimeoutError) {
        // The charger may still act on it: the job stays open for its notifications.
        this.setStatus(jobId, 'Unanswered', err.message, false);
        throw new TransferError(
          'charger_timeout',
          `charger ${chargerId} did not answer in time; it may still act on job ${jobId}`,
        );
      }
      if (err instanceof ChargerOfflineError) {
        this.setStatus(jobId, 'NotSent', err.message, true);
        throw new TransferError('charger_offline', `charger ${chargerId} is not connected`);
      }
      throw err;
    }
    const accepted = TAKEN.has(reply.status);
    if (accepted) this.setStatus(jobId, 'Accepted', null, false, 'Requested');
    else this.setStatus(jobId, 'Rejected', `the charger answered ${reply.status}`, true);
    return { job: this.job(jobId), status: reply.status, accepted, reply: reply.raw };
  }

  private setStatus(
    jobId: number,
    status: string,
    detail: string | null,
    finished: boolean,
    over?: string,
  ): void {
    this.deps.store.setStatus(jobId, {
      status,
      detail,
      at: this.nowIso(),
      finished,
      ...(over === undefined ? {} : { over }),
    });
    this.changed(jobId);
  }

  /** The job as it is now, told to whoever follows jobs. */
  private changed(jobId: number): TransferJob {
    const job = this.job(jobId);
    this.deps.onJobChange?.(job);
    return job;
  }

  private job(jobId: number): TransferJob {
    const job = this.deps.store.job(jobId);
    if (!job) throw new Error(`transfer job ${jobId} vanished`);
    return job;
  }

  /** The job a URL token names, if it is of this kind, unfinished and unexpired. */
  private liveJob(token: string, kind: TransferKind): TransferJob {
    const job = this.deps.store.byToken(sha256(token));
    if (!job || job.kind !== kind) throw new TransferError('not_found', 'no such transfer');
    if (Date.parse(job.urlExpiresAt) <= this.deps.clock.now()) {
      throw new TransferError('url_expired', 'this transfer URL has expired');
    }
    if (ENDED_BY_GATEWAY.has(job.status) || (job.finished && job.kind === 'firmware')) {
      throw new TransferError('url_expired', 'this transfer is over');
    }
    return job;
  }

  private async stored(
    kind: TransferKind,
    fileId: string,
    body: Readable | Buffer,
    maxBytes: number,
  ): Promise<{ sizeBytes: number; sha256: string }> {
    try {
      return await this.deps.area.write(kind, fileId, body, maxBytes);
    } catch (err) {
      if (err instanceof TooLargeError) {
        throw new TransferError('payload_too_large', `the file is ${err.message}`);
      }
      throw err;
    }
  }

  private charger(chargerId: string): void {
    if (!this.deps.site.charger(chargerId)) {
      throw new TransferError('charger_not_found', `no charger with id ${chargerId}`);
    }
  }

  private refuseOffline(chargerId: string): void {
    if (!this.deps.chargers.isOnline(chargerId)) {
      throw new TransferError(
        'charger_offline',
        `charger ${chargerId} is not connected; nothing was sent or queued`,
      );
    }
  }

  private refuseBusy(chargerId: string): void {
    const sessions = this.deps.openSessions(chargerId);
    const connectors = [...(this.deps.site.charger(chargerId)?.connectors.keys() ?? [])].filter(
      (id) => IN_USE.has(this.deps.chargers.connector(chargerId, id).status),
    );
    if (sessions.length === 0 && connectors.length === 0) return;
    const what =
      sessions.length > 0
        ? `session${sessions.length > 1 ? 's' : ''} ${sessions.join(', ')} open`
        : `a transaction on connector ${connectors.join(', ')}`;
    throw new TransferError(
      'charger_busy',
      `charger ${chargerId} has ${what}: a firmware update starts only on an idle charger; nothing was sent or queued`,
    );
  }

  private nowIso(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}
