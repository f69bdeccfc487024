import { execFile } from 'node:child_process';
import { verify } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ocppRpc from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHARGER_PASSWORD, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { errorCode } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import { rawCharger, type RawClient } from './helpers/raw-charger.js';
import { assertSchemaValid } from './helpers/ocpp-schemas.js';
import { makeSigner, uploadFirmware, type Signer } from './helpers/transfers.js';
import { waitUntil } from './helpers/wait.js';

// Signed firmware (OCPP 2.0.1 L01.FR.11, OCTT TC_L_01; 1.6 security whitepaper's
// SignedUpdateFirmware): the upload carries a signing certificate and signature, checked at the
// edge and verified over the file; every update of the file sends both, on raw-frame chargers.

const { createRPCError } = ocppRpc;

let t: TestGateway;
let operator: string;
let viewer: string;
let rsa: Signer;
let ec: Signer;
/** What a charger reports installing signed firmware. */
const SIGNED_INSTALL = [
  'Downloading',
  'Downloaded',
  'SignatureVerified',
  'Installing',
  'Installed',
];
const FIRMWARE = Buffer.from('signed firmware image 1.0\n'.repeat(400));

const upload = (
  name: string,
  bytes: Buffer,
  signing: { signingCertificate?: string; signature?: string } = {},
) => uploadFirmware(t.gw.operatorUrl, operator, name, bytes, signing);

const update = (chargerId: string, fileId: unknown) =>
  op(t.gw.operatorUrl, operator, 'POST', `/chargers/${chargerId}/firmware-update`, { fileId });

/** Uploads FIRMWARE signed by `signer` and sends it to the charger. */
async function signedUpdate(chargerId: string, name: string, signer: Signer) {
  const file = await upload(name, FIRMWARE, {
    signingCertificate: signer.certificate,
    signature: signer.sign(FIRMWARE),
  });
  return { file, res: await update(chargerId, file.body.fileId) };
}

interface Job {
  jobId: number;
  status: string;
  finished: boolean;
}
const jobOf = (body: unknown) => (body as { job: Job }).job;
const history = async (jobId: number) =>
  (
    (await op(t.gw.operatorUrl, viewer, 'GET', `/transfer-jobs/${jobId}`)).body as {
      history: { status: string }[];
    }
  ).history.map((h) => h.status);

beforeAll(async () => {
  t = await startTestGateway({ transfers: { retries: 0, retryIntervalSeconds: 1 } });
  operator = createOperator(t.gw.db, 'otto', 'operator');
  viewer = createOperator(t.gw.db, 'vera', 'viewer');
  rsa = makeSigner('rsa');
  ec = makeSigner('ec');
});
afterAll(async () => t?.close());

describe('a signed upload is checked at the edge and verified over the file', () => {
  it.each([
    { signer: 'rsa', digest: 'sha256' },
    { signer: 'rsa', digest: 'sha512' },
    { signer: 'ec', digest: 'sha256' },
    { signer: 'ec', digest: 'sha384' },
  ])('keeps a file signed with $signer over $digest', async ({ signer, digest }) => {
    const s = signer === 'rsa' ? rsa : ec;
    const res = await upload(`fw-${signer}-${digest}.bin`, FIRMWARE, {
      signingCertificate: s.certificate,
      signature: s.sign(FIRMWARE, digest),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ signed: true, sizeBytes: FIRMWARE.length });
  });

  it('keeps an unsigned file as unsigned', async () => {
    const res = await upload('plain.bin', FIRMWARE);
    expect(res.status).toBe(201);
    expect(res.body.signed).toBe(false);
  });

  it.each([
    ['a certificate without a signature', () => ({ signingCertificate: rsa.certificate })],
    ['a signature without a certificate', () => ({ signature: rsa.sign(FIRMWARE) })],
    [
      'a certificate that is not PEM',
      () => ({ signingCertificate: 'not a certificate', signature: rsa.sign(FIRMWARE) }),
    ],
    [
      'a PEM block that is no certificate',
      () => ({
        signingCertificate: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
        signature: rsa.sign(FIRMWARE),
      }),
    ],
    [
      'a signature that is not base64',
      () => ({ signingCertificate: rsa.certificate, signature: 'not base64!' }),
    ],
  ])('refuses %s with 400, keeping nothing', async (_name, signing) => {
    const before = (await op(t.gw.operatorUrl, viewer, 'GET', '/firmware')).body;
    const res = await upload('refused.bin', FIRMWARE, signing());
    expect(res.status).toBe(400);
    expect(errorCode({ status: res.status, body: res.body, headers: new Headers() })).toBe(
      'invalid_request',
    );
    expect((await op(t.gw.operatorUrl, viewer, 'GET', '/firmware')).body).toEqual(before);
  });

  it.each([
    [
      'another key’s signature',
      () => ({ signingCertificate: rsa.certificate, signature: ec.sign(FIRMWARE) }),
    ],
    [
      'a signature over other bytes',
      () => ({
        signingCertificate: ec.certificate,
        signature: ec.sign(Buffer.concat([FIRMWARE, Buffer.from('tampered')])),
      }),
    ],
  ])('refuses %s with 422 invalid_signature, keeping nothing', async (_name, signing) => {
    const before = (await op(t.gw.operatorUrl, viewer, 'GET', '/firmware')).body;
    const res = await upload('bad-signature.bin', FIRMWARE, signing());
    expect(res.status).toBe(422);
    expect((res.body as { error: { code: string } }).error.code).toBe('invalid_signature');
    expect((await op(t.gw.operatorUrl, viewer, 'GET', '/firmware')).body).toEqual(before);
  });
});

describe('OCPP 2.0.1: UpdateFirmware carries the signing certificate and signature', () => {
  let raw: RawClient;
  const received: { firmware: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    raw = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD, ['ocpp2.0.1']);
    raw.handle('UpdateFirmware', async ({ params }) => {
      assertSchemaValid('ocpp2.0.1', 'UpdateFirmware', params);
      received.push(params as { firmware: Record<string, unknown> });
      return { status: 'Accepted' };
    });
    await raw.call('BootNotification', {
      reason: 'PowerUp',
      chargingStation: { model: 'R2', vendorName: 'Raw' },
    });
  });
  afterAll(async () => raw.close({ code: 1000 }));

  it('sends both with a signed file, neither with an unsigned one; the job follows requestId', async () => {
    const { file: signed, res } = await signedUpdate('CP-AC', 'signed-201.bin', ec);
    expect(res.status).toBe(200);
    const job = jobOf(res.body);
    const sent = received.at(-1)?.firmware;
    expect(sent?.signingCertificate).toBe(ec.certificate.trim());
    // ECDSA signatures differ each time: the one sent is the one uploaded, verifying over the file.
    expect(
      verify('sha256', FIRMWARE, ec.certificate, Buffer.from(sent?.signature as string, 'base64')),
    ).toBe(true);
    expect(sent?.signature).toBe(
      (
        t.gw.db
          .prepare('SELECT signature FROM transfer_files WHERE file_id = ?')
          .get(signed.body.fileId) as { signature: string }
      ).signature,
    );
    const got = await fetch(sent?.location as string);
    expect(Buffer.from(await got.arrayBuffer()).equals(FIRMWARE)).toBe(true);
    for (const status of SIGNED_INSTALL) {
      await raw.call('FirmwareStatusNotification', { status, requestId: job.jobId });
    }
    expect(await history(job.jobId)).toEqual(['Requested', 'Accepted', ...SIGNED_INSTALL]);

    const plain = await upload('plain-201.bin', FIRMWARE);
    const again = await update('CP-AC', plain.body.fileId);
    expect(again.status).toBe(200);
    expect(Object.keys(received.at(-1)?.firmware ?? {}).sort()).toEqual([
      'location',
      'retrieveDateTime',
    ]);
  });

  it('a charger that refuses the certificate ends the job Rejected with its word', async () => {
    raw.handle('UpdateFirmware', async () => ({ status: 'InvalidCertificate' }));
    const { res } = await signedUpdate('CP-AC', 'refused-201.bin', rsa);
    expect(res.body).toMatchObject({ accepted: false, status: 'InvalidCertificate' });
    expect(jobOf(res.body)).toMatchObject({ status: 'Rejected', finished: true });
  });
});

describe('OCPP 1.6J: a signed file goes as SignedUpdateFirmware, an unsigned one as UpdateFirmware', () => {
  let raw: RawClient;
  const calls: { action: string; params: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    raw = await rawCharger(t.gw.ocppUrl, 'CP-OFF', CHARGER_PASSWORD, ['ocpp1.6']);
    for (const action of ['SignedUpdateFirmware', 'UpdateFirmware']) {
      raw.handle(action, async ({ params }) => {
        assertSchemaValid('ocpp1.6', action, params);
        calls.push({ action, params: params as Record<string, unknown> });
        return action === 'SignedUpdateFirmware' ? { status: 'Accepted' } : {};
      });
    }
    await raw.call('BootNotification', { chargePointVendor: 'Raw', chargePointModel: 'R1' });
  });
  afterAll(async () => raw.close({ code: 1000 }));

  it('tracks the job by SignedFirmwareStatusNotification’s requestId to Installed', async () => {
    const { res } = await signedUpdate('CP-OFF', 'signed-16.bin', rsa);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accepted: true, status: 'Accepted' });
    const job = jobOf(res.body);
    const call = calls.at(-1);
    expect(call?.action).toBe('SignedUpdateFirmware');
    expect(call?.params).toMatchObject({
      requestId: job.jobId,
      retries: 0,
      retryInterval: 1,
      firmware: { signingCertificate: rsa.certificate.trim(), signature: rsa.sign(FIRMWARE) },
    });
    const location = (call?.params.firmware as { location: string }).location;
    expect((await fetch(location)).status).toBe(200);

    // A later unsigned job is the charger's latest open one: the signed job's reports name theirs.
    const plain = await upload('later-16.bin', FIRMWARE);
    const later = jobOf((await update('CP-OFF', plain.body.fileId)).body);
    for (const status of SIGNED_INSTALL) {
      await raw.call('SignedFirmwareStatusNotification', { status, requestId: job.jobId });
    }
    const done = await waitUntil(
      async () => {
        const j = jobOf(
          (await op(t.gw.operatorUrl, viewer, 'GET', `/transfer-jobs/${job.jobId}`)).body,
        );
        return j.finished ? j : undefined;
      },
      5000,
      'signed job finished',
    );
    expect(done.status).toBe('Installed');
    expect(await history(later.jobId)).toEqual(['Requested', 'Accepted']);
    expect(await history(job.jobId)).toEqual(['Requested', 'Accepted', ...SIGNED_INSTALL]);
  });

  it('a signature the charger finds invalid ends the job InvalidSignature', async () => {
    const { res } = await signedUpdate('CP-OFF', 'invalid-16.bin', ec);
    const job = jobOf(res.body);
    await raw.call('SignedFirmwareStatusNotification', {
      status: 'Downloaded',
      requestId: job.jobId,
    });
    await raw.call('SignedFirmwareStatusNotification', {
      status: 'InvalidSignature',
      requestId: job.jobId,
    });
    const now = jobOf(
      (await op(t.gw.operatorUrl, viewer, 'GET', `/transfer-jobs/${job.jobId}`)).body,
    );
    expect(now).toMatchObject({ status: 'InvalidSignature', finished: true });
  });

  it('sends an unsigned file as UpdateFirmware', async () => {
    const plain = await upload('plain-16.bin', FIRMWARE);
    const res = await update('CP-OFF', plain.body.fileId);
    expect(res.status).toBe(200);
    expect(calls.at(-1)?.action).toBe('UpdateFirmware');
    expect(Object.keys(calls.at(-1)?.params ?? {}).sort()).toEqual([
      'location',
      'retries',
      'retrieveDate',
      'retryInterval',
    ]);
  });

  it('a charger without the security extension answers NotImplemented: the job ends Rejected', async () => {
    raw.handle('SignedUpdateFirmware', async () => {
      throw createRPCError('NotImplemented', 'SignedUpdateFirmware');
    });
    const { res } = await signedUpdate('CP-OFF', 'unknown-16.bin', rsa);
    expect(res.body).toMatchObject({ accepted: false, status: 'CallError' });
    expect(jobOf(res.body)).toMatchObject({ status: 'Rejected', finished: true });
  });
});

describe('the CLI', () => {
  it('uploads a signed file from a PEM file and a raw signature file', async () => {
    const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');
    const bin = join(t.dir, 'cli-signed.bin');
    const pem = join(t.dir, 'signer.pem');
    const sig = join(t.dir, 'cli-signed.sig');
    writeFileSync(bin, FIRMWARE);
    writeFileSync(pem, ec.certificate);
    writeFileSync(sig, Buffer.from(ec.sign(FIRMWARE), 'base64'));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [CLI, 'firmware', 'upload', bin, '--signing-certificate', pem, '--signature', sig],
      {
        env: {
          ...process.env,
          FLEET_GATEWAY_OPERATOR_URL: t.gw.operatorUrl,
          FLEET_GATEWAY_OPERATOR_CREDENTIAL: operator,
        },
      },
    );
    expect(stdout).toMatch(
      /^firmware \S+: cli-signed\.bin, 10400 bytes, sha256 [0-9a-f]{64}, signed$/m,
    );
  });
});
