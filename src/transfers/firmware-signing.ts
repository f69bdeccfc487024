import { createVerify, X509Certificate, type Verify } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FirmwareSigning } from './transfer.js';

/** OCPP's limits for UpdateFirmware's `firmware.signingCertificate` and `signature`. */
export const MAX_CERTIFICATE_CHARS = 5500;
export const MAX_SIGNATURE_CHARS = 800;

/** The digests a firmware signature is tried with: SHA-256 first, what vendors' tools default to. */
const DIGESTS = ['sha256', 'sha384', 'sha512'] as const;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const PEM = /^-----BEGIN CERTIFICATE-----\r?\n[\s\S]+?\r?\n-----END CERTIFICATE-----\s*$/;

/**
 * A signing certificate and signature as an upload carries them, checked: both or neither; the
 * certificate one PEM X.509 certificate that node:crypto parses, with an RSA or EC key; the
 * signature standard base64. Returns the reason it is refused, or the signing.
 */
export function readSigning(input: {
  signingCertificate?: string | undefined;
  signature?: string | undefined;
}): FirmwareSigning | null | string {
  const { signingCertificate, signature } = input;
  if (signingCertificate === undefined && signature === undefined) return null;
  if (signingCertificate === undefined || signature === undefined) {
    return 'signingCertificate and signature come together: a signed firmware file needs both';
  }
  if (signingCertificate.length > MAX_CERTIFICATE_CHARS || !PEM.test(signingCertificate)) {
    return `signingCertificate must be one PEM certificate of at most ${MAX_CERTIFICATE_CHARS} characters`;
  }
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(signingCertificate);
  } catch (err) {
    return `signingCertificate is not an X.509 certificate: ${(err as Error).message}`;
  }
  const keyType = certificate.publicKey.asymmetricKeyType;
  if (keyType !== 'rsa' && keyType !== 'ec') {
    return `signingCertificate's key is ${keyType ?? 'unknown'}: firmware is signed with RSA or ECDSA`;
  }
  if (signature.length > MAX_SIGNATURE_CHARS || signature.length === 0 || !BASE64.test(signature)) {
    return `signature must be base64 of at most ${MAX_SIGNATURE_CHARS} characters`;
  }
  return { signingCertificate: signingCertificate.trim(), signature };
}

/**
 * Whether the signature verifies over the file's bytes with the certificate's key: RSA PKCS #1
 * v1.5 or ECDSA (DER), over the file's SHA-256, SHA-384 or SHA-512 (`openssl dgst -sha256 -sign`
 * makes one). The file is read once, every digest fed as it streams.
 */
export async function signatureVerifies(
  bytes: Readable,
  signing: FirmwareSigning,
): Promise<boolean> {
  const key = new X509Certificate(signing.signingCertificate).publicKey;
  const verifiers: Verify[] = DIGESTS.map((digest) => createVerify(digest));
  for await (const chunk of bytes) {
    for (const v of verifiers) v.update(chunk as Buffer);
  }
  const signature = Buffer.from(signing.signature, 'base64');
  return verifiers.some((v) => {
    try {
      return v.verify(key, signature);
    } catch {
      return false;
    }
  });
}
