import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../src/ocpp/connection/charger-password.js';
import { makeTestPki, type TestPki } from './helpers/certs.js';
import { startTestGateway, type TestGateway, UNPHYSICAL_KW } from './helpers/gateway.js';
import { rawCharger } from './helpers/raw-charger.js';
import { checkSentFrames, noFrames } from './helpers/strict21.js';

/**
 * A 2.1 station on the TLS listener: security profile 2 (TLS with basic auth) and 3 (its own
 * client certificate), as a 2.0.1 station is admitted (test/ocpp-security-profiles.test.ts);
 * 2.1 is negotiated after admission, so the profile rules are the same for every version.
 */

const TLS_PASSWORD = 'profile-two-password-0021';
const oneConnector = (id: string) => ({
  id,
  connectors: [{ id: '1', tariff: 'dc', maxPowerKw: UNPHYSICAL_KW }],
});
let pki: TestPki;
let t: TestGateway;

beforeAll(async () => {
  pki = makeTestPki();
  t = await startTestGateway({
    ocpp: { tls: { port: 0, cert: pki.serverCert, key: pki.serverKey, ca: pki.caCert } },
    chargers: [
      { ...oneConnector('CP-TLS'), securityProfile: 2, passwordHash: hashPassword(TLS_PASSWORD) },
      { ...oneConnector('CP-MTLS'), securityProfile: 3 },
    ],
  });
});
afterAll(async () => {
  await t?.close();
  pki?.remove();
});

/** Boots a 2.1 station over wss; what the gateway sent it, checked against 2.1's schemas. */
async function bootsOverTls(
  id: string,
  password: string | undefined,
  client?: { cert: string; key: string },
) {
  const url = t.gw.ocppTlsUrl;
  if (!url) throw new Error('no OCPP TLS listener');
  const cp = await rawCharger(url, id, password, ['ocpp2.1'], {
    ca: pki.read(pki.caCert),
    ...(client && { cert: pki.read(client.cert), key: pki.read(client.key) }),
  });
  const sent = noFrames();
  checkSentFrames(cp, sent);
  expect(cp.protocol).toBe('ocpp2.1');
  const reply = await cp.call('BootNotification', {
    reason: 'PowerUp',
    chargingStation: { vendorName: 'Acme', model: 'DC150' },
  });
  expect(reply).toMatchObject({ status: 'Accepted' });
  await cp.close({ code: 1000 });
  expect(sent.problems).toEqual([]);
}

describe('a 2.1 station on the TLS listener', () => {
  it('profile 2: TLS with its password', async () => {
    await bootsOverTls('CP-TLS', TLS_PASSWORD);
    await expect(bootsOverTls('CP-TLS', 'not-the-password-000021')).rejects.toThrow();
  });

  it('profile 3: its own client certificate', async () => {
    await bootsOverTls('CP-MTLS', undefined, pki.client('CP-MTLS'));
    await expect(
      bootsOverTls('CP-MTLS', undefined, pki.client('CP-MTLS', { rogue: true })),
    ).rejects.toThrow();
  });
});
