import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  CHARGER_PASSWORD,
  startTestGateway,
  testConfig,
  type TestGateway,
} from './helpers/gateway.js';
import { errorCode, type JsonResponse } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import { rawCharger } from './helpers/raw-charger.js';
import { uploadFirmware } from './helpers/transfers.js';

// How transfer jobs end and their files go, from the outside: the firmware URL's lifetime, an
// operator's cancel (also mid-download), the timeout of a silent job across a restart, deleting
// files, file retention, and backup and restore with the files; raw-frame chargers of both
// protocols, the operator API and the CLI.

const TOKEN_MINUTES = 10;
const TIMEOUT_MINUTES = 60;
const MINUTE = 60_000;
const DAY = 86_400_000;
/** Big enough that loopback socket buffers cannot hold it: a download is still under way. */
const BIG = Buffer.alloc(48 * 1024 * 1024, 5);
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');

let t: TestGateway;
let operator: string;
let viewer: string;
let bigFileId: string;

interface Job {
  jobId: number;
  chargerId: string;
  status: string;
  finished: boolean;
  urlExpiresAt: string;
  retrieveAt: string | null;
  logFileId: string | null;
}
const jobOf = (res: JsonResponse) => (res.body as { job: Job }).job;
const act = (method: string, path: string, body?: unknown, credential = operator) =>
  op(t.gw.operatorUrl, credential, method, path, body);
const jobNow = async (jobId: number) => jobOf(await act('GET', `/transfer-jobs/${jobId}`));
const historyOf = async (jobId: number) =>
  (
    (await act('GET', `/transfer-jobs/${jobId}`)).body as {
      history: { status: string; detail: string | null }[];
    }
  ).history;
const upload = async (name: string, bytes: Buffer) => {
  const res = await uploadFirmware(t.gw.operatorUrl, operator, name, bytes);
  expect(res.status).toBe(201);
  return res.body.fileId as string;
};
const onDisk = (kind: 'firmware' | 'log', fileId: string) =>
  existsSync(join(t.dir, 'files', kind, fileId));

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], {
      env: {
        ...process.env,
        FLEET_GATEWAY_OPERATOR_URL: t.gw.operatorUrl,
        FLEET_GATEWAY_OPERATOR_CREDENTIAL: operator,
      },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A raw charger that takes every firmware and log request and remembers its URL. */
async function charger(chargerId: string, protocol: 'ocpp1.6' | 'ocpp2.0.1') {
  const raw = await rawCharger(t.gw.ocppUrl, chargerId, CHARGER_PASSWORD, [protocol]);
  const given = { firmware: '', log: '' };
  const v16 = protocol === 'ocpp1.6';
  raw.handle('UpdateFirmware', async ({ params }) => {
    const p = params as { location?: string; firmware?: { location: string } };
    given.firmware = (p.location ?? p.firmware?.location) as string;
    return v16 ? {} : { status: 'Accepted' };
  });
  raw.handle(v16 ? 'GetDiagnostics' : 'GetLog', async ({ params }) => {
    const p = params as { location?: string; log?: { remoteLocation: string } };
    given.log = (p.location ?? p.log?.remoteLocation) as string;
    return v16 ? { fileName: 'diag.log' } : { status: 'Accepted', filename: 'diag.log' };
  });
  await raw.call(
    'BootNotification',
    v16
      ? { chargePointVendor: 'Raw', chargePointModel: 'R1' }
      : { reason: 'PowerUp', chargingStation: { model: 'R2', vendorName: 'Raw' } },
  );
  /** A firmware status report the job can be found by (1.6: the signed notification's requestId). */
  const report = (jobId: number, status: string) =>
    v16
      ? raw.call('SignedFirmwareStatusNotification', { status, requestId: jobId })
      : raw.call('FirmwareStatusNotification', { status, requestId: jobId });
  const logReport = (jobId: number, status: string) =>
    v16
      ? raw.call('DiagnosticsStatusNotification', { status })
      : raw.call('LogStatusNotification', { status, requestId: jobId });
  return { raw, given, report, logReport };
}

beforeAll(async () => {
  t = await startTestGateway({
    transfers: {
      maxFirmwareBytes: 64 * 1024 * 1024,
      tokenMinutes: TOKEN_MINUTES,
      jobTimeoutMinutes: TIMEOUT_MINUTES,
      retries: 0,
      retryIntervalSeconds: 1,
    },
    // File retention runs at start-up (a restart here) and then daily.
    retention: { logFilesDays: 1, firmwareFilesDays: 2, intervalMinutes: 1440 },
  });
  operator = createOperator(t.gw.db, 'otto', 'operator');
  viewer = createOperator(t.gw.db, 'vera', 'viewer');
  bigFileId = await upload('big-5.0.bin', BIG);
});
afterAll(async () => t?.close());

describe.each([
  { protocol: 'ocpp1.6' as const, chargerId: 'CP-OFF' },
  { protocol: 'ocpp2.0.1' as const, chargerId: 'CP-AC' },
])('$protocol: a job’s URL and its end', ({ protocol, chargerId }) => {
  let c: Awaited<ReturnType<typeof charger>>;
  beforeAll(async () => {
    c = await charger(chargerId, protocol);
  });
  afterAll(async () => c.raw.close({ code: 1000 }));

  const update = async (fileId: string, retrieveAt?: string) => {
    const res = await act('POST', `/chargers/${chargerId}/firmware-update`, {
      fileId,
      ...(retrieveAt === undefined ? {} : { retrieveAt }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return jobOf(res);
  };

  it('a retrieve time in the past: the URL works tokenMinutes from the request', async () => {
    const fileId = await upload(`past-${protocol}.bin`, Buffer.from('past'));
    const requested = t.clock.now();
    const job = await update(fileId, new Date(requested - 2 * 60 * MINUTE).toISOString());
    const answered = t.clock.now();
    // Counted from the request (the test's clock is real time plus what the test moved it).
    const expires = Date.parse(job.urlExpiresAt) - TOKEN_MINUTES * MINUTE;
    expect(expires).toBeGreaterThanOrEqual(requested);
    expect(expires).toBeLessThanOrEqual(answered);
    t.clock.advance((TOKEN_MINUTES - 1) * MINUTE);
    expect((await fetch(c.given.firmware)).status).toBe(200);
    t.clock.advance(2 * MINUTE);
    const late = await fetch(c.given.firmware);
    expect(late.status).toBe(410);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('url_expired');
  });

  it('a retrieve time ahead: the URL works tokenMinutes from the retrieve time', async () => {
    const fileId = await upload(`ahead-${protocol}.bin`, Buffer.from('ahead'));
    const retrieveMs = t.clock.now() + 3 * 60 * MINUTE;
    const job = await update(fileId, new Date(retrieveMs).toISOString());
    expect(job.retrieveAt).toBe(new Date(retrieveMs).toISOString());
    expect(Date.parse(job.urlExpiresAt)).toBe(retrieveMs + TOKEN_MINUTES * MINUTE);
    t.clock.advance(retrieveMs + (TOKEN_MINUTES - 1) * MINUTE - t.clock.now());
    expect((await fetch(c.given.firmware)).status).toBe(200);
    t.clock.advance(2 * MINUTE);
    expect((await fetch(c.given.firmware)).status).toBe(410);
  });

  it('cancelling cuts a download under way, stops serving the URL and keeps late reports aside', async () => {
    const job = await update(bigFileId);
    const res = await fetch(c.given.firmware);
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);

    expect(
      (await act('POST', `/transfer-jobs/${job.jobId}/cancel`, undefined, viewer)).status,
    ).toBe(403);
    const cancelled = await act('POST', `/transfer-jobs/${job.jobId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(jobOf(cancelled)).toMatchObject({ status: 'Cancelled', finished: true });

    let received = first.value?.length ?? 0;
    const rest = (async () => {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return received;
        received += chunk.value.length;
      }
    })();
    await expect(rest).rejects.toThrow();
    expect(received).toBeLessThan(BIG.length);
    expect((await fetch(c.given.firmware)).status).toBe(410);

    await c.report(job.jobId, 'Downloading');
    expect(await jobNow(job.jobId)).toMatchObject({ status: 'Cancelled', finished: true });
    expect(await historyOf(job.jobId)).toEqual([
      { status: 'Requested', detail: null, at: expect.any(String) },
      { status: 'Accepted', detail: null, at: expect.any(String) },
      { status: 'Cancelled', detail: 'by otto', at: expect.any(String) },
      { status: 'Downloading', detail: 'after the gateway ended the job', at: expect.any(String) },
    ]);

    const again = await act('POST', `/transfer-jobs/${job.jobId}/cancel`);
    expect(again.status).toBe(409);
    expect(errorCode(again)).toBe('job_finished');
    expect(errorCode(await act('POST', '/transfer-jobs/999999/cancel'))).toBe('job_not_found');
    const audit = (await act('GET', '/audit', undefined, viewer)).body as {
      entries: { action: string; status: number; result: unknown }[];
    };
    expect(
      audit.entries.find((e) => e.action === 'transfer.cancel' && e.status === 200),
    ).toMatchObject({
      result: { chargerId, kind: 'firmware' },
    });
  });

  it('a cancelled log job’s upload URL takes nothing', async () => {
    const job = jobOf(await act('POST', `/chargers/${chargerId}/log-request`));
    expect((await act('POST', `/transfer-jobs/${job.jobId}/cancel`)).status).toBe(200);
    const put = await fetch(c.given.log, { method: 'PUT', body: 'too late\n' });
    expect(put.status).toBe(410);
    expect((await jobNow(job.jobId)).logFileId).toBeNull();
  });

  it('a file is deleted only once no unfinished job uses it; then it is gone everywhere', async () => {
    const fileId = await upload(`delete-${protocol}.bin`, Buffer.from('to delete'));
    const job = await update(fileId);
    const refused = await act('DELETE', `/files/${fileId}`);
    expect(refused.status).toBe(409);
    expect(errorCode(refused)).toBe('file_in_use');
    expect(onDisk('firmware', fileId)).toBe(true);

    for (const status of ['Downloading', 'Downloaded', 'Installing', 'Installed']) {
      await c.report(job.jobId, status);
    }
    expect((await act('DELETE', `/files/${fileId}`, undefined, viewer)).status).toBe(403);
    const deleted = await act('DELETE', `/files/${fileId}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ fileId, kind: 'firmware' });
    expect(onDisk('firmware', fileId)).toBe(false);
    expect((await act('GET', `/files/${fileId}`)).status).toBe(404);
    const listed = (await act('GET', '/firmware')).body as { files: { fileId: string }[] };
    expect(listed.files.map((f) => f.fileId)).not.toContain(fileId);
    const resend = await act('POST', `/chargers/${chargerId}/firmware-update`, { fileId });
    expect(errorCode(resend)).toBe('file_not_found');
    expect(errorCode(await act('DELETE', `/files/${fileId}`))).toBe('file_not_found');
    // The job still names the file it sent.
    expect((await act('GET', `/transfer-jobs/${job.jobId}`)).body).toMatchObject({
      job: { firmwareFileId: fileId, status: 'Installed' },
    });

    const logJob = jobOf(await act('POST', `/chargers/${chargerId}/log-request`));
    expect((await fetch(c.given.log, { method: 'PUT', body: 'diag\n' })).status).toBe(201);
    const logFileId = (await jobNow(logJob.jobId)).logFileId as string;
    expect(errorCode(await act('DELETE', `/files/${logFileId}`))).toBe('file_in_use');
    await c.logReport(logJob.jobId, 'Uploading');
    await c.logReport(logJob.jobId, 'Uploaded');
    expect((await act('DELETE', `/files/${logFileId}`)).status).toBe(200);
    expect(onDisk('log', logFileId)).toBe(false);
    const audit = (await act('GET', '/audit', undefined, viewer)).body as {
      entries: { action: string; status: number; result: unknown }[];
    };
    expect(audit.entries.filter((e) => e.action === 'file.delete').map((e) => e.status)).toEqual(
      expect.arrayContaining([200, 409, 403]),
    );
  });
});

describe('a job whose charger falls silent ends TimedOut, also across a restart', () => {
  it('times out from the latest status, or from a retrieve time ahead', async () => {
    const c = await charger('CP-1', 'ocpp1.6');
    const quiet = jobOf(await act('POST', '/chargers/CP-1/log-request'));
    const logUrl = c.given.log;
    const fileId = await upload('later.bin', Buffer.from('later'));
    const retrieveMs = t.clock.now() + 5 * 60 * MINUTE;
    const ahead = jobOf(
      await act('POST', '/chargers/CP-1/firmware-update', {
        fileId,
        retrieveAt: new Date(retrieveMs).toISOString(),
      }),
    );
    await c.raw.close({ code: 1000 });

    t.clock.advance((TIMEOUT_MINUTES + 1) * MINUTE);
    await t.restart();
    expect(await jobNow(quiet.jobId)).toMatchObject({ status: 'TimedOut', finished: true });
    expect((await historyOf(quiet.jobId)).at(-1)).toMatchObject({
      status: 'TimedOut',
      detail: `no word from the charger for ${TIMEOUT_MINUTES} minutes`,
    });
    const put = await fetch(logUrl.replace(/^http:\/\/[^/]+/, t.gw.operatorUrl), {
      method: 'PUT',
      body: 'late\n',
    });
    expect(put.status).toBe(410);
    expect(await jobNow(ahead.jobId)).toMatchObject({ status: 'Accepted', finished: false });

    t.clock.advance(retrieveMs + (TIMEOUT_MINUTES + 1) * MINUTE - t.clock.now());
    await t.restart();
    expect(await jobNow(ahead.jobId)).toMatchObject({ status: 'TimedOut', finished: true });
    expect(t.logLines.some((l) => l.includes('transfer job timed out'))).toBe(true);
  });
});

describe('file retention', () => {
  it('deletes logs and firmware past their window, never one an unfinished job uses', async () => {
    const c = await charger('CP-1', 'ocpp1.6');
    const logJob = jobOf(await act('POST', '/chargers/CP-1/log-request'));
    expect((await fetch(c.given.log, { method: 'PUT', body: 'old log\n' })).status).toBe(201);
    await c.raw.call('DiagnosticsStatusNotification', { status: 'Uploaded' });
    const oldLog = (await jobNow(logJob.jobId)).logFileId as string;
    const unused = await upload('unused.bin', Buffer.from('unused'));
    const inUse = await upload('in-use.bin', Buffer.from('in use'));
    // Its retrieve time is far ahead: the job stays open past every window here.
    await act('POST', '/chargers/CP-1/firmware-update', {
      fileId: inUse,
      retrieveAt: new Date(t.clock.now() + 30 * DAY).toISOString(),
    });
    const usedLately = await upload('used-lately.bin', Buffer.from('used lately'));
    t.clock.advance(1.5 * DAY);
    const lateJob = jobOf(
      await act('POST', '/chargers/CP-1/firmware-update', { fileId: usedLately }),
    );
    await act('POST', `/transfer-jobs/${lateJob.jobId}/cancel`);
    await c.raw.close({ code: 1000 });

    t.clock.advance(0.5 * DAY + 60 * MINUTE);
    await t.restart();
    expect(onDisk('log', oldLog)).toBe(false);
    expect(onDisk('firmware', unused)).toBe(false);
    expect(onDisk('firmware', inUse)).toBe(true);
    expect(onDisk('firmware', usedLately)).toBe(true);
    const firmware = ((await act('GET', '/firmware')).body as { files: { fileId: string }[] })
      .files;
    expect(firmware.map((f) => f.fileId)).toEqual(expect.arrayContaining([inUse, usedLately]));
    expect(firmware.map((f) => f.fileId)).not.toContain(unused);
    const logs = ((await act('GET', '/logs')).body as { files: { fileId: string }[] }).files;
    expect(logs.map((f) => f.fileId)).not.toContain(oldLog);
    expect(t.logLines.some((l) => l.includes('transfer files past their window deleted'))).toBe(
      true,
    );
  });
});

describe('the CLI', () => {
  it('cancels a job and deletes a firmware file and a log', async () => {
    const c = await charger('CP-1', 'ocpp1.6');
    try {
      const fileId = await upload('cli-delete.bin', Buffer.from('cli'));
      const job = jobOf(await act('POST', '/chargers/CP-1/firmware-update', { fileId }));
      const refused = await cli('firmware', 'delete', fileId);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('is used by an unfinished job');
      expect((await cli('transfers', 'cancel', String(job.jobId))).stdout).toBe(
        `job ${job.jobId} on CP-1: Cancelled\n`,
      );
      expect((await cli('firmware', 'delete', fileId)).stdout).toBe(
        `deleted firmware ${fileId} (cli-delete.bin)\n`,
      );
      const logJob = jobOf(await act('POST', '/chargers/CP-1/log-request'));
      await fetch(c.given.log, { method: 'PUT', body: 'cli log\n' });
      await c.raw.call('DiagnosticsStatusNotification', { status: 'Uploaded' });
      const logFileId = (await jobNow(logJob.jobId)).logFileId as string;
      expect((await cli('logs', 'delete', logFileId)).stdout).toMatch(/^deleted log /);
      expect(onDisk('log', logFileId)).toBe(false);
    } finally {
      await c.raw.close({ code: 1000 });
    }
  });
});

describe('backup and restore bring the transfer files along', () => {
  it('copies the kept files beside the backup and puts them back with the database', async () => {
    const kept = await upload('backed-up.bin', Buffer.from('backed up bytes'));
    const gone = await upload('deleted-before.bin', Buffer.from('deleted'));
    expect((await act('DELETE', `/files/${gone}`)).status).toBe(200);
    const configPath = join(t.dir, 'gateway.yaml');
    writeFileSync(configPath, stringify({ ...t.configInput, retention: {} }));
    const backupDir = join(t.dir, 'backups');
    mkdirSync(backupDir);
    const backup = join(backupDir, 'site.db');
    const made = await cli('backup', '--config', configPath, backup);
    expect(made.stderr).toBe('');
    expect(made.stdout).toMatch(/, \d+ transfer files, \d+ bytes\n$/);
    expect(readFileSync(join(`${backup}.files`, 'firmware', kept), 'utf8')).toBe('backed up bytes');
    expect(existsSync(join(`${backup}.files`, 'firmware', gone))).toBe(false);
    const twice = await cli('backup', '--config', configPath, backup);
    expect(twice.code).toBe(1);

    const restoreDir = join(t.dir, 'restored');
    mkdirSync(restoreDir);
    const restoredConfig = join(restoreDir, 'gateway.yaml');
    writeFileSync(restoredConfig, stringify(testConfig(restoreDir)));
    const restored = await cli('restore', '--config', restoredConfig, backup);
    expect(restored.stderr).toBe('');
    expect(restored.stdout).toContain(`restored ${backup} to ${join(restoreDir, 'gateway.db')}`);
    expect(readFileSync(join(restoreDir, 'files', 'firmware', kept), 'utf8')).toBe(
      'backed up bytes',
    );
    const verify = await cli('ledger', 'verify', '--config', restoredConfig);
    expect(verify.stdout).toContain('all invariants hold');

    const over = await cli('restore', '--config', restoredConfig, backup);
    expect(over.code).toBe(1);
    expect(over.stderr).toContain('move the database, its -wal and -shm aside first');
  });
});
