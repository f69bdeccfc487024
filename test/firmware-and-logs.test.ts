import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHARGER_PASSWORD,
  DRIVERS,
  API_KEY,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { errorCode, mintToken, startSession, type JsonResponse } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import { rawCharger, type RawClient } from './helpers/raw-charger.js';
import {
  bootedCharger,
  IONIQ,
  ocpp16,
  ocpp201,
  type SimulatedChargePoint,
} from './helpers/simulated-charger.js';
import { uploadFirmware as upload } from './helpers/transfers.js';
import { waitUntil } from './helpers/wait.js';

const MAX_FIRMWARE = 64 * 1024;
const MAX_LOG = 4 * 1024;
const TOKEN_MINUTES = 10;

let t: TestGateway;
let viewer: string;
let operator: string;

interface Job {
  jobId: number;
  status: string;
  finished: boolean;
  logFileId: string | null;
}

const uploadFirmware = (name: string, bytes: Buffer, credential = operator) =>
  upload(t.gw.operatorUrl, credential, name, bytes);

const history = async (jobId: number) =>
  (
    (await op(t.gw.operatorUrl, viewer, 'GET', `/transfer-jobs/${jobId}`)).body as {
      history: { status: string }[];
    }
  ).history.map((h) => h.status);

async function finished(jobId: number): Promise<Job> {
  return waitUntil(
    async () => {
      const res = await op(t.gw.operatorUrl, viewer, 'GET', `/transfer-jobs/${jobId}`);
      const job = (res.body as { job: Job }).job;
      return job.finished ? job : undefined;
    },
    10_000,
    `job ${jobId} finished`,
  );
}

const jobOf = (res: JsonResponse) => (res.body as { job: Job }).job;

beforeAll(async () => {
  t = await startTestGateway({
    transfers: {
      maxFirmwareBytes: MAX_FIRMWARE,
      maxLogBytes: MAX_LOG,
      tokenMinutes: TOKEN_MINUTES,
      retries: 0,
      retryIntervalSeconds: 1,
    },
  });
  viewer = createOperator(t.gw.db, 'vera', 'viewer');
  operator = createOperator(t.gw.db, 'otto', 'operator');
});
afterAll(async () => t.close());

describe.each([
  {
    protocol: ocpp16,
    chargerId: 'CP-1',
    installed: ['Downloading', 'Downloaded', 'Installing', 'Installed'],
  },
  {
    protocol: ocpp201,
    chargerId: 'CP-AC',
    installed: ['Downloading', 'Downloaded', 'Installing', 'InstallRebooting', 'Installed'],
  },
])('$protocol.name: firmware and logs over the LAN', ({ protocol, chargerId, installed }) => {
  let cp: SimulatedChargePoint;
  beforeAll(async () => {
    cp = await bootedCharger(protocol, t.gw, chargerId, { connectors: 1 });
  });
  afterAll(async () => cp.disconnect());

  it('serves an uploaded firmware file; the charger downloads, installs, reboots on it', async () => {
    const name = `fw-${chargerId.toLowerCase()}-2.0.bin`;
    const file = await uploadFirmware(name, Buffer.alloc(20_000, 7));
    expect(file.status).toBe(201);
    expect(file.body).toMatchObject({ kind: 'firmware', name, sizeBytes: 20_000 });
    const boots = cp.waitFor('connected');
    const res = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      `/chargers/${chargerId}/firmware-update`,
      {
        fileId: file.body.fileId,
      },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accepted: true, status: 'Accepted' });
    const job = await finished(jobOf(res).jobId);
    expect(job.status).toBe('Installed');
    // The charger's first notification may overtake its reply: 'Accepted' is kept where it came.
    const statuses = await history(job.jobId);
    expect(statuses).toContain('Accepted');
    expect(statuses.filter((s) => s !== 'Accepted')).toEqual(['Requested', ...installed]);
    await boots;
    const info = t.gw.db
      .prepare('SELECT firmware_version FROM charger_info WHERE charger_id = ?')
      .get(chargerId) as { firmware_version: string };
    expect(info.firmware_version).toBe(`fw-${chargerId.toLowerCase()}-2.0`);
  });

  it('receives the charger’s diagnostics or log at its upload URL, listed and downloadable', async () => {
    const res = await op(t.gw.operatorUrl, operator, 'POST', `/chargers/${chargerId}/log-request`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accepted: true });
    const job = await finished(jobOf(res).jobId);
    expect(job.status).toBe('Uploaded');
    const statuses = await history(job.jobId);
    expect(statuses).toContain('Accepted');
    expect(statuses.filter((s) => s !== 'Accepted')).toEqual([
      'Requested',
      'Uploading',
      'Uploaded',
    ]);
    const logs = (await op(t.gw.operatorUrl, viewer, 'GET', '/logs')).body as {
      files: { fileId: string; chargerId: string; jobId: number }[];
    };
    const listed = logs.files.find((f) => f.jobId === job.jobId);
    expect(listed).toMatchObject({ chargerId, fileId: job.logFileId });
    const content = await fetch(`${t.gw.operatorUrl}/admin/v1/files/${job.logFileId}`, {
      headers: { authorization: `Bearer ${viewer}` },
    });
    expect(content.status).toBe(200);
    expect(await content.text()).toContain(`${chargerId} diagnostics`);
  });
});

describe('a firmware update never starts on a charger with an open session', () => {
  it('refuses with 409 charger_busy and sends nothing', async () => {
    const cp = await bootedCharger(ocpp16, t.gw, 'CP-1', { connectors: 2 });
    try {
      const file = await uploadFirmware('busy.bin', Buffer.alloc(100, 1));
      await cp.plugIn(1, IONIQ);
      const started = cp.waitFor('transactionStarted');
      const driver = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
      const session = await startSession(
        t.gw.url,
        driver,
        { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
        1_000,
      );
      expect(session.status).toBe(200);
      await started;
      const jobsBefore = (await op(t.gw.operatorUrl, viewer, 'GET', '/transfer-jobs')).body;
      const res = await op(t.gw.operatorUrl, operator, 'POST', '/chargers/CP-1/firmware-update', {
        fileId: file.body.fileId,
      });
      expect(res.status).toBe(409);
      expect(errorCode(res)).toBe('charger_busy');
      expect((res.body as { error: { message: string } }).error.message).toContain(
        (session.body as { sessionId: string }).sessionId,
      );
      expect((await op(t.gw.operatorUrl, viewer, 'GET', '/transfer-jobs')).body).toEqual(
        jobsBefore,
      );
    } finally {
      await cp.disconnect();
    }
  });
});

describe('URL tokens and size limits', () => {
  let raw: RawClient;
  const given: { firmware?: string; log?: string } = {};
  beforeAll(async () => {
    raw = await rawCharger(t.gw.ocppUrl, 'CP-OFF', CHARGER_PASSWORD, ['ocpp1.6']);
    raw.handle('UpdateFirmware', async ({ params }) => {
      given.firmware = (params as { location: string }).location;
      return {};
    });
    raw.handle('GetDiagnostics', async ({ params }) => {
      given.log = (params as { location: string }).location;
      return { fileName: 'diag.log' };
    });
    await raw.call('BootNotification', { chargePointVendor: 'Raw', chargePointModel: 'R1' });
  });
  afterAll(async () => raw.close({ code: 1000 }));

  it('a firmware URL downloads only its file, until it expires; a log URL takes one upload', async () => {
    const file = await uploadFirmware('token.bin', Buffer.from('firmware bytes'));
    const update = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      '/chargers/CP-OFF/firmware-update',
      {
        fileId: file.body.fileId,
      },
    );
    expect(update.status).toBe(200);
    const logJob = await op(t.gw.operatorUrl, operator, 'POST', '/chargers/CP-OFF/log-request');
    expect(logJob.status).toBe(200);
    const firmwareUrl = given.firmware as string;
    const logUrl = given.log as string;
    expect(firmwareUrl).toMatch(/\/transfers\/firmware\/[A-Za-z0-9_-]{43}\/token\.bin$/);
    const firmwareToken = firmwareUrl.split('/').at(-2) as string;
    const logToken = logUrl.split('/').at(-1) as string;

    const got = await fetch(firmwareUrl);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe('firmware bytes');

    // Each token serves its own purpose only; a guessed one nothing.
    const base = firmwareUrl.slice(0, firmwareUrl.indexOf('/transfers/'));
    expect((await fetch(`${base}/transfers/firmware/${logToken}/token.bin`)).status).toBe(404);
    expect(
      (await fetch(`${base}/transfers/logs/${firmwareToken}`, { method: 'PUT', body: 'x' })).status,
    ).toBe(404);
    expect((await fetch(`${base}/transfers/firmware/${'A'.repeat(43)}/token.bin`)).status).toBe(
      404,
    );

    const put = await fetch(`${logUrl}/diag.log`, { method: 'PUT', body: 'log line\n' });
    expect(put.status).toBe(201);
    const again = await fetch(logUrl, { method: 'PUT', body: 'another\n' });
    expect(again.status).toBe(409);

    t.clock.advance((TOKEN_MINUTES + 1) * 60_000);
    expect((await fetch(firmwareUrl)).status).toBe(410);

    // The whole token never reaches the log.
    for (const token of [firmwareToken, logToken]) {
      expect(t.logLines.some((line) => line.includes(token))).toBe(false);
    }
  });

  it('refuses a firmware file or a log above its size limit, keeping nothing', async () => {
    const big = await uploadFirmware('big.bin', Buffer.alloc(MAX_FIRMWARE + 1));
    expect(big.status).toBe(413);
    const listed = (await op(t.gw.operatorUrl, viewer, 'GET', '/firmware')).body as {
      files: { name: string }[];
    };
    expect(listed.files.map((f) => f.name)).not.toContain('big.bin');

    const logJob = await op(t.gw.operatorUrl, operator, 'POST', '/chargers/CP-OFF/log-request');
    expect(logJob.status).toBe(200);
    const tooLong = await fetch(given.log as string, {
      method: 'PUT',
      body: 'x'.repeat(MAX_LOG + 1),
    });
    expect(tooLong.status).toBe(413);
    const form = new FormData();
    form.append('file', new Blob(['y'.repeat(MAX_LOG + 1)]), 'big.log');
    const multipart = await fetch(given.log as string, { method: 'POST', body: form });
    expect(multipart.status).toBe(413);
    expect(
      jobOf(await op(t.gw.operatorUrl, viewer, 'GET', `/transfer-jobs/${jobOf(logJob).jobId}`))
        .logFileId,
    ).toBeNull();
  });

  it('keeps a status a charger repeats once, and moves the 1.6 job it cannot name', async () => {
    const res = await op(t.gw.operatorUrl, operator, 'POST', '/chargers/CP-OFF/log-request');
    const jobId = jobOf(res).jobId;
    for (const status of ['Uploading', 'Uploading', 'Uploading', 'Uploaded']) {
      await raw.call('DiagnosticsStatusNotification', { status });
    }
    expect((await finished(jobId)).status).toBe('Uploaded');
    expect(await history(jobId)).toEqual(['Requested', 'Accepted', 'Uploading', 'Uploaded']);
  });

  it('lets a viewer read but not upload or update', async () => {
    expect((await uploadFirmware('v.bin', Buffer.from('v'), viewer)).status).toBe(403);
    const res = await op(t.gw.operatorUrl, viewer, 'POST', '/chargers/CP-OFF/log-request');
    expect(res.status).toBe(403);
  });
});

describe('the CLI', () => {
  const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');
  const cli = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...args], {
      env: {
        ...process.env,
        FLEET_GATEWAY_OPERATOR_URL: t.gw.operatorUrl,
        FLEET_GATEWAY_OPERATOR_CREDENTIAL: operator,
      },
    });
    return stdout;
  };

  it('uploads firmware, updates a charger, requests its log, shows the job and saves the log', async () => {
    const cp = await bootedCharger(ocpp201, t.gw, 'CP-AC', { connectors: 1 });
    try {
      const firmwareFile = join(t.dir, 'cli-3.1.bin');
      writeFileSync(firmwareFile, Buffer.alloc(5000, 3));
      const uploaded = JSON.parse(await cli('firmware', 'upload', firmwareFile, '--json')) as {
        fileId: string;
      };
      const update = await cli('firmware', 'update', 'CP-AC', uploaded.fileId);
      const jobId = Number(/^job (\d+) on CP-AC: Accepted/.exec(update)?.[1]);
      expect((await finished(jobId)).status).toBe('Installed');
      expect(await cli('transfers', 'show', String(jobId))).toMatch(
        /InstallRebooting[\s\S]*Installed/,
      );

      const requested = await cli('logs', 'request', 'CP-AC');
      const logJob = await finished(Number(/^job (\d+)/.exec(requested)?.[1]));
      const out = join(t.dir, 'saved.log');
      await cli('logs', 'download', logJob.logFileId as string, '--out', out);
      expect(readFileSync(out, 'utf8')).toContain('CP-AC firmware cli-3.1');
    } finally {
      await cp.disconnect();
    }
  });
});
