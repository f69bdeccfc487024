import { execFileSync } from 'node:child_process';
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A firmware upload through the operator API: raw bytes, the name and any signing in the query. */
export async function uploadFirmware(
  operatorUrl: string,
  credential: string,
  name: string,
  bytes: Buffer,
  signing: { signingCertificate?: string; signature?: string } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const query = new URLSearchParams({ name });
  for (const [k, v] of Object.entries(signing)) if (v !== undefined) query.set(k, v);
  const res = await fetch(`${operatorUrl}/admin/v1/firmware?${query.toString()}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${credential}`,
      'content-type': 'application/octet-stream',
    },
    body: new Uint8Array(bytes),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A firmware signer: a self-signed certificate (made by openssl) and its private key. */
export interface Signer {
  certificate: string;
  key: KeyObject;
  /** The base64 signature over `bytes` with this signer's key and `digest`. */
  sign(bytes: Buffer, digest?: string): string;
}

export function makeSigner(kind: 'rsa' | 'ec', cn = `firmware-signer-${kind}`): Signer {
  const dir = mkdtempSync(join(tmpdir(), 'fw-signer-'));
  try {
    const keyArgs =
      kind === 'rsa'
        ? ['-newkey', 'rsa:2048']
        : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        ...keyArgs,
        '-nodes',
        '-keyout',
        'k.pem',
        '-out',
        'c.pem',
        '-days',
        '2',
      ].concat(['-subj', `/CN=${cn}`]),
      { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const key = createPrivateKey(readFileSync(join(dir, 'k.pem')));
    return {
      certificate: readFileSync(join(dir, 'c.pem'), 'utf8'),
      key,
      sign: (bytes, digest = 'sha256') => sign(digest, bytes, key).toString('base64'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
