import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** PEM files made for one test file: a CA, a server certificate for 127.0.0.1, client certificates. */
export interface TestPki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  /** An RSA server certificate for 127.0.0.1 and its key (the one above is ECDSA), made on first use. */
  rsaServer(): { cert: string; key: string };
  /** A client certificate and key with subject CN = `cn`, signed by the CA (or a stranger's CA). */
  client(cn: string, options?: { rogue?: boolean }): { cert: string; key: string };
  read(path: string): Buffer;
  remove(): void;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const RSA = ['-newkey', 'rsa:2048', '-nodes'];

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function selfSignedCa(dir: string, name: string): void {
  openssl(
    ['req', '-x509', ...EC, '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2'].concat([
      '-subj',
      `/CN=${name}`,
    ]),
    dir,
  );
}

function signed(
  dir: string,
  name: string,
  cn: string,
  ca: string,
  extensions: string,
  keyType = EC,
): void {
  openssl(
    ['req', ...keyType, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`],
    dir,
  );
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(
    ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`].concat([
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    ]),
    dir,
  );
}

/** Generates the certificates with the openssl command (Debian's `openssl` package). */
export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-pki-'));
  selfSignedCa(dir, 'ca');
  const serverExtensions =
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n';
  signed(dir, 'server', 'localhost', 'ca', serverExtensions);
  let rogueMade = false;
  let rsaMade = false;
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
    rsaServer() {
      if (!rsaMade) signed(dir, 'server-rsa', 'localhost', 'ca', serverExtensions, RSA);
      rsaMade = true;
      return { cert: join(dir, 'server-rsa.crt'), key: join(dir, 'server-rsa.key') };
    },
    client(cn, options = {}) {
      const ca = options.rogue ? 'rogue-ca' : 'ca';
      if (options.rogue && !rogueMade) {
        selfSignedCa(dir, 'rogue-ca');
        rogueMade = true;
      }
      const name = `client-${ca}-${cn.replace(/[^A-Za-z0-9-]/g, '_')}`;
      signed(dir, name, cn, ca, 'extendedKeyUsage=clientAuth\n');
      return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
    },
    read: (path) => readFileSync(path),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
