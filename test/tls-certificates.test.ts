import { connect, type ConnectionOptions } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config/read-config.js';
import { hashPassword } from '../src/ocpp/connection/charger-password.js';
import { readTlsFiles } from '../src/shared/tls-files.js';
import { makeTestPki, type TestPki } from './helpers/certs.js';
import {
  startTestGateway,
  testConfig,
  type TestGateway,
  UNPHYSICAL_KW,
} from './helpers/gateway.js';
import { rawCharger } from './helpers/raw-charger.js';

const PASSWORD = 'dual-certificate-pass-01';

let pki: TestPki;
let t: TestGateway;

beforeAll(async () => {
  pki = makeTestPki();
  const both = [{ cert: pki.serverCert, key: pki.serverKey }, pki.rsaServer()];
  t = await startTestGateway({
    http: { tls: { certificates: both } },
    ocpp: { tls: { port: 0, certificates: both, ca: pki.caCert } },
    chargers: [
      {
        id: 'CP-DUAL',
        securityProfile: 2,
        passwordHash: hashPassword(PASSWORD),
        connectors: [{ id: '1', tariff: 'dc', maxPowerKw: UNPHYSICAL_KW }],
      },
    ],
  });
});
afterAll(async () => {
  await t?.close();
  pki?.remove();
});

interface Handshake {
  suite: string | undefined;
  version: string | null;
  keyType: string | undefined;
}

/** A real TLS handshake as a charger offering only `options.ciphers` would make it. */
function handshake(url: string, options: ConnectionOptions): Promise<Handshake> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: hostname,
      port: Number(port),
      ca: pki.read(pki.caCert),
      ...options,
    });
    socket.once('secureConnect', () => {
      resolve({
        suite: socket.getCipher().standardName,
        version: socket.getProtocol(),
        keyType: socket.getPeerX509Certificate()?.publicKey.asymmetricKeyType,
      });
      socket.end();
    });
    socket.once('error', reject);
  });
}

const ocppTls = () => t.gw.ocppTlsUrl ?? '';
const tls12 = (ciphers: string): ConnectionOptions => ({ ciphers, maxVersion: 'TLSv1.2' });

describe('one TLS listener with an ECDSA and an RSA certificate (OCPP 2.0.1 A00.FR.318)', () => {
  it.each([
    ['ECDHE-ECDSA-AES128-GCM-SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'ec'],
    ['ECDHE-ECDSA-AES256-GCM-SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'ec'],
    ['AES128-GCM-SHA256', 'TLS_RSA_WITH_AES_128_GCM_SHA256', 'rsa'],
    ['AES256-GCM-SHA384', 'TLS_RSA_WITH_AES_256_GCM_SHA384', 'rsa'],
    ['ECDHE-RSA-AES128-GCM-SHA256', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'rsa'],
  ])('a charger offering only %s gets %s with the %s certificate', async (offer, suite, key) => {
    for (const url of [ocppTls(), t.gw.url]) {
      await expect(handshake(url, tls12(offer))).resolves.toEqual({
        suite,
        version: 'TLSv1.2',
        keyType: key,
      });
    }
  });

  it('prefers a forward-secret suite when the charger offers both kinds, and TLS 1.3 when it can', async () => {
    const both = tls12('AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256');
    expect((await handshake(ocppTls(), both)).suite).toBe('TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256');
    expect((await handshake(ocppTls(), {})).version).toBe('TLSv1.3');
  });

  it('refuses CBC suites and TLS 1.1', async () => {
    await expect(handshake(ocppTls(), tls12('ECDHE-ECDSA-AES128-SHA256'))).rejects.toThrow();
    await expect(handshake(ocppTls(), tls12('AES128-SHA256'))).rejects.toThrow();
    await expect(
      handshake(ocppTls(), { minVersion: 'TLSv1', maxVersion: 'TLSv1.1' }),
    ).rejects.toThrow();
  });

  it.each([
    ['ocpp1.6', 'AES128-GCM-SHA256'],
    ['ocpp2.0.1', 'AES256-GCM-SHA384'],
    ['ocpp1.6', 'ECDHE-ECDSA-AES128-GCM-SHA256'],
    ['ocpp2.0.1', 'ECDHE-ECDSA-AES256-GCM-SHA384'],
  ])('admits a %s charger over wss offering only %s', async (protocol, offer) => {
    const cp = await rawCharger(ocppTls(), 'CP-DUAL', PASSWORD, [protocol], {
      ca: pki.read(pki.caCert),
      ...tls12(offer),
    });
    const boot =
      protocol === 'ocpp1.6'
        ? ['BootNotification', { chargePointVendor: 'V', chargePointModel: 'M' }]
        : [
            'BootNotification',
            { reason: 'PowerUp', chargingStation: { model: 'M', vendorName: 'V' } },
          ];
    await expect(cp.call(boot[0] as string, boot[1])).resolves.toMatchObject({
      status: 'Accepted',
    });
    await cp.close({ code: 1000 });
  });
});

describe('the certificate config', () => {
  const withTls = (tls: unknown) =>
    parseConfig(
      { ...testConfig('/tmp/x'), ocpp: { tls: { port: 0, ...(tls as object) } } },
      '/tmp/x',
    );

  it('takes one cert and key as before, or a list, and refuses both forms at once or half of one', () => {
    expect(withTls({ cert: 'a.crt', key: 'a.key' }).ocpp.tls?.cert).toBe('/tmp/x/a.crt');
    const list = withTls({ certificates: [{ cert: 'e.crt', key: 'e.key' }] }).ocpp.tls;
    expect(list?.certificates).toEqual([{ cert: '/tmp/x/e.crt', key: '/tmp/x/e.key' }]);
    for (const bad of [
      { cert: 'a.crt', key: 'a.key', certificates: [{ cert: 'e.crt', key: 'e.key' }] },
      { cert: 'a.crt' },
      {},
    ])
      expect(() => withTls(bad)).toThrow(ConfigError);
  });

  it('stops at start-up on two certificates of one key type, or a key that is not its certificate’s', () => {
    const ec = { cert: pki.serverCert, key: pki.serverKey };
    const rsa = pki.rsaServer();
    expect(() => readTlsFiles({ certificates: [ec, ec] }, 'ocpp.tls')).toThrow(
      /two ec certificates/,
    );
    expect(() =>
      readTlsFiles({ certificates: [{ cert: ec.cert, key: rsa.key }] }, 'ocpp.tls'),
    ).toThrow(/is not the key of/);
    expect(readTlsFiles({ certificates: [ec, rsa] }, 'ocpp.tls').cert).toHaveLength(2);
  });
});
