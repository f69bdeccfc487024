import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { hashPassword } from '../src/ocpp/connection/charger-password.js';
import { makeTestPki, type TestPki } from './helpers/certs.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
  UNPHYSICAL_KW,
} from './helpers/gateway.js';
import { mintToken } from './helpers/http.js';
import { rawCharger } from './helpers/raw-charger.js';
import { IONIQ, PROTOCOLS } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

const TLS_PASSWORD = 'profile-two-password-0001';
const MTLS_PASSWORD = 'profile-three-password-01';

let pki: TestPki;
let t: TestGateway;

beforeAll(async () => {
  pki = makeTestPki();
  const passwordHash = hashPassword(CHARGER_PASSWORD);
  t = await startTestGateway({
    ocpp: {
      meterSampleIntervalSeconds: 10,
      callTimeoutSeconds: 2,
      authFailureDelay: { initialMilliseconds: 5, maxMilliseconds: 40 },
      tls: { port: 0, cert: pki.serverCert, key: pki.serverKey, ca: pki.caCert },
    },
    sessions: { startTimeoutSeconds: 5, maxAmount: 1_000_000, stopLeadMilliseconds: 0 },
    chargers: [
      {
        id: 'CP-1',
        passwordHash,
        connectors: [{ id: '1', tariff: 'dc', maxPowerKw: UNPHYSICAL_KW }],
      },
      {
        id: 'CP-TLS',
        securityProfile: 2,
        passwordHash: hashPassword(TLS_PASSWORD),
        connectors: [{ id: '1', tariff: 'dc', maxPowerKw: UNPHYSICAL_KW }],
      },
      {
        id: 'CP-MTLS',
        securityProfile: 3,
        connectors: [{ id: '1', tariff: 'dc', maxPowerKw: UNPHYSICAL_KW }],
      },
      {
        id: 'CP-MTLS-PW',
        securityProfile: 3,
        passwordHash: hashPassword(MTLS_PASSWORD),
        connectors: [{ id: '1', tariff: 'dc', maxPowerKw: UNPHYSICAL_KW }],
      },
    ],
  });
});
afterAll(async () => {
  await t?.close();
  pki?.remove();
});

function tlsOpts(client?: { cert: string; key: string }): Record<string, unknown> {
  return {
    ca: pki.read(pki.caCert),
    ...(client ? { cert: pki.read(client.cert), key: pki.read(client.key) } : {}),
  };
}

async function connects(
  url: string,
  id: string,
  password: string | undefined,
  wsOpts: Record<string, unknown> = {},
  protocols = ['ocpp1.6'],
): Promise<true> {
  const cp = await rawCharger(url, id, password, protocols, wsOpts);
  await cp.close({ code: 1000 });
  return true;
}

function tlsUrl(): string {
  const url = t.gw.ocppTlsUrl;
  if (!url) throw new Error('no OCPP TLS listener');
  return url;
}

describe('security profile 2: TLS with basic auth', () => {
  it('refuses a profile 2 charger on the plain listener, even with its password, and says so without the password', async () => {
    await expect(connects(t.gw.ocppUrl, 'CP-TLS', TLS_PASSWORD)).rejects.toThrow(/Unauthorized/);
    const line = t.logLines.find(
      (l) => l.includes('CP-TLS') && l.includes('needs TLS') && l.includes('passwordSentInClear'),
    );
    expect(line).toBeDefined();
    expect(t.logLines.join('\n')).not.toContain(TLS_PASSWORD);
  });

  it.each([['ocpp1.6'], ['ocpp2.0.1']])('admits it over wss with its password (%s)', async (p) => {
    await expect(connects(tlsUrl(), 'CP-TLS', TLS_PASSWORD, tlsOpts(), [p])).resolves.toBe(true);
  });

  it('refuses a wrong or missing password over wss', async () => {
    await expect(connects(tlsUrl(), 'CP-TLS', 'not-the-right-password', tlsOpts())).rejects.toThrow(
      /Unauthorized/,
    );
    await expect(connects(tlsUrl(), 'CP-TLS', undefined, tlsOpts())).rejects.toThrow(
      /Unauthorized/,
    );
  });

  it('lets a profile 1 charger use the TLS listener too', async () => {
    await expect(connects(tlsUrl(), 'CP-1', CHARGER_PASSWORD, tlsOpts())).resolves.toBe(true);
  });

  it('answers plain HTTPS requests on the OCPP TLS listener with 404 and nothing else', async () => {
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = httpsRequest(
        `${tlsUrl().replace('wss:', 'https:')}/CP-1`,
        { ca: pki.read(pki.caCert) },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(404);
  });
});

describe('security profile 3: TLS with a client certificate for the charge point id', () => {
  it('admits a charger whose certificate is signed by the CA and names it (no password)', async () => {
    const own = pki.client('CP-MTLS');
    await expect(connects(tlsUrl(), 'CP-MTLS', undefined, tlsOpts(own))).resolves.toBe(true);
  });

  it('refuses no certificate, a certificate for another id, and one from another CA', async () => {
    await expect(connects(tlsUrl(), 'CP-MTLS', undefined, tlsOpts())).rejects.toThrow(
      /Unauthorized/,
    );
    const other = pki.client('CP-1');
    await expect(connects(tlsUrl(), 'CP-MTLS', undefined, tlsOpts(other))).rejects.toThrow(
      /Unauthorized/,
    );
    const rogue = pki.client('CP-MTLS', { rogue: true });
    await expect(connects(tlsUrl(), 'CP-MTLS', undefined, tlsOpts(rogue))).rejects.toThrow(
      /Unauthorized/,
    );
    // and never on the plain listener
    await expect(connects(t.gw.ocppUrl, 'CP-MTLS', undefined)).rejects.toThrow(/Unauthorized/);
  });

  it('also checks the password when one is configured for a profile 3 charger', async () => {
    const own = pki.client('CP-MTLS-PW');
    await expect(connects(tlsUrl(), 'CP-MTLS-PW', undefined, tlsOpts(own))).rejects.toThrow(
      /Unauthorized/,
    );
    await expect(connects(tlsUrl(), 'CP-MTLS-PW', MTLS_PASSWORD, tlsOpts(own))).resolves.toBe(true);
  });
});

describe('failed admissions', () => {
  it('are refused after a delay that doubles per failure from the same address, up to the cap', async () => {
    // A success from the address starts it over.
    await connects(t.gw.ocppUrl, 'CP-1', CHARGER_PASSWORD);
    const before = t.logLines.length;
    for (let i = 0; i < 5; i++) {
      await expect(connects(t.gw.ocppUrl, 'CP-1', `wrong-password-${i}-000000`)).rejects.toThrow(
        /Unauthorized/,
      );
    }
    await expect(connects(t.gw.ocppUrl, 'CP-NOBODY', CHARGER_PASSWORD)).rejects.toThrow(
      /Not Found/,
    );
    const delays = t.logLines
      .slice(before)
      .filter((l) => l.includes('ocpp connection refused'))
      .map((l) => (JSON.parse(l) as { delayMs: number }).delayMs);
    expect(delays).toEqual([5, 10, 20, 40, 40, 40]);
    expect(t.logLines.slice(before).join('\n')).not.toMatch(/wrong-password-\d/);
  });
});

describe.each(PROTOCOLS)('a profile 2 simulator session end to end over wss: $name', (protocol) => {
  it('mint → start → charge to the paid energy → settled', async () => {
    const cp = await protocol.connect(tlsUrl(), 'CP-TLS', {
      password: TLS_PASSWORD,
      connectors: 1,
      tls: { ca: pki.read(pki.caCert) },
    });
    try {
      await cp.plugIn(1, IONIQ);
      await waitUntil(
        () =>
          t.gw.db
            .prepare(
              "SELECT 1 FROM connector_state WHERE charger_id = 'CP-TLS' AND soc_percent IS NOT NULL",
            )
            .get(),
        5000,
        'SoC over wss',
      );
      const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
      const res = await fetch(`${t.gw.url}/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          chargerId: 'CP-TLS',
          connectorId: '1',
          driverEmail: DRIVERS.ada.email,
          amount: 1000,
        }),
      });
      expect(res.status).toBe(200);
      const { sessionId } = (await res.json()) as { sessionId: string };
      const settled = await waitUntil(
        () =>
          t.gw.db
            .prepare(
              "SELECT state, delivered_wh, cost, credited FROM sessions WHERE id = ? AND state = 'settled'",
            )
            .get(sessionId) as { delivered_wh: number; cost: number; credited: number } | undefined,
        20_000,
        'settlement',
      );
      expect(settled.delivered_wh).toBeGreaterThan(0);
      expect(settled.cost + settled.credited).toBe(1000);
      const report = verifyLedger(t.gw.db);
      expect(report.checks.filter((c) => c.violations.length > 0)).toEqual([]);
    } finally {
      await cp.disconnect();
    }
  });
});

describe('profile configuration', () => {
  const base = (chargers: unknown[], ocpp: Record<string, unknown> = {}) => ({
    siteId: 's',
    tariffs: { dc: { pricePerKwh: 100 } },
    ocpp,
    chargers,
  });
  const charger = (extra: Record<string, unknown>) => ({
    id: 'X',
    connectors: [{ id: '1', tariff: 'dc', maxPowerKw: UNPHYSICAL_KW }],
    ...extra,
  });

  it('refuses a profile no listener can offer, and a password-less profile 1 or 2 charger', async () => {
    const { parseConfig } = await import('../src/config/read-config.js');
    const hash = hashPassword(CHARGER_PASSWORD);
    expect(() => parseConfig(base([charger({ securityProfile: 2, passwordHash: hash })]))).toThrow(
      /chargers\.0\.securityProfile: profile 2 needs ocpp\.tls or http\.tls/,
    );
    const tlsNoCa = { tls: { port: 0, cert: 'c.pem', key: 'k.pem' } };
    expect(() => parseConfig(base([charger({ securityProfile: 3 })], tlsNoCa))).toThrow(
      /profile 3 needs ocpp\.tls with a ca/,
    );
    expect(() => parseConfig(base([charger({ securityProfile: 1 })]))).toThrow(
      /chargers\.0\.passwordHash: required for security profiles 1 and 2/,
    );
    expect(() => hashPassword('fifteen-chars-x')).toThrow(/16 to 40/);
    expect(() => hashPassword('x'.repeat(41))).toThrow(/16 to 40/);
  });
});

describe('http.tls: the API and the OCPP WebSocket over TLS on the main port', () => {
  let tt: TestGateway;
  beforeAll(async () => {
    tt = await startTestGateway({
      http: { host: '127.0.0.1', port: 0, tls: { cert: pki.serverCert, key: pki.serverKey } },
      chargers: [
        {
          id: 'CP-TLS',
          securityProfile: 2,
          passwordHash: hashPassword(TLS_PASSWORD),
          connectors: [{ id: '1', tariff: 'dc', maxPowerKw: UNPHYSICAL_KW }],
        },
      ],
    });
  });
  afterAll(async () => {
    await tt?.close();
  });

  it('serves the API over https with HSTS, and admits a profile 2 charger over wss', async () => {
    expect(tt.gw.url).toMatch(/^https:/);
    const res = await new Promise<{ status?: number; hsts?: string | string[] }>(
      (resolve, reject) => {
        const req = httpsRequest(`${tt.gw.url}/healthz`, { ca: pki.read(pki.caCert) }, (r) => {
          r.resume();
          resolve({ status: r.statusCode, hsts: r.headers['strict-transport-security'] });
        });
        req.on('error', reject);
        req.end();
      },
    );
    expect(res).toEqual({ status: 200, hsts: 'max-age=31536000' });
    await expect(connects(tt.gw.ocppUrl, 'CP-TLS', TLS_PASSWORD, tlsOpts())).resolves.toBe(true);
  });
});
