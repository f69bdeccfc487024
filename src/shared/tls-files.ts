import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** One certificate (PEM, its chain after it) and its private key. */
export interface CertificateFiles {
  cert: string;
  key: string;
}

/** A server's TLS files: one certificate as `cert` and `key`, or several as `certificates`. */
export interface TlsFiles {
  cert?: string | undefined;
  key?: string | undefined;
  certificates?: CertificateFiles[] | undefined;
  ca?: string | undefined;
}

export interface TlsMaterial {
  cert: Buffer[];
  key: Buffer[];
  ca?: Buffer;
}

/** The certificate pairs of a server's TLS files, whichever form the config used. */
function certificatePairs(files: TlsFiles): CertificateFiles[] {
  if (files.certificates !== undefined) return files.certificates;
  return files.cert !== undefined && files.key !== undefined
    ? [{ cert: files.cert, key: files.key }]
    : [];
}

/**
 * Reads PEM files once at start-up; a missing or unreadable file, a key that is not its
 * certificate's, or two certificates of one key type (OpenSSL would keep only the last) stop the
 * gateway with the file's name.
 */
export function readTlsFiles(files: TlsFiles, what: string): TlsMaterial {
  const read = (path: string, role: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new Error(`${what}: cannot read ${role} ${path}: ${(err as Error).message}`);
    }
  };
  const cert: Buffer[] = [];
  const key: Buffer[] = [];
  const types = new Set<string>();
  for (const pair of certificatePairs(files)) {
    const pem = read(pair.cert, 'cert');
    const privateKey = read(pair.key, 'key');
    const type = keyType(pem, privateKey, pair, what);
    if (types.has(type))
      throw new Error(`${what}: two ${type} certificates; give one per key type`);
    types.add(type);
    cert.push(pem);
    key.push(privateKey);
  }
  return { cert, key, ...(files.ca === undefined ? {} : { ca: read(files.ca, 'ca') }) };
}

function keyType(pem: Buffer, privateKey: Buffer, pair: CertificateFiles, what: string): string {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pem);
  } catch (err) {
    throw new Error(`${what}: ${pair.cert} is not a PEM certificate: ${(err as Error).message}`);
  }
  let matches: boolean;
  try {
    matches = certificate.checkPrivateKey(createPrivateKey(privateKey));
  } catch (err) {
    throw new Error(`${what}: ${pair.key} is not a PEM private key: ${(err as Error).message}`);
  }
  if (!matches) throw new Error(`${what}: ${pair.key} is not the key of ${pair.cert}`);
  return certificate.publicKey.asymmetricKeyType ?? 'unknown';
}
