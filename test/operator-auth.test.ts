import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OperatorCredentials } from '../src/auth/operator-credentials.js';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, errorCode, mintToken, post } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';

let t: TestGateway;
let viewer: string;
let operator: string;

beforeAll(async () => {
  t = await startTestGateway();
  viewer = createOperator(t.gw.db, 'vera', 'viewer');
  operator = createOperator(t.gw.db, 'otto', 'operator');
});
afterAll(async () => t.close());

describe('operator API authentication', () => {
  it('refuses a request without a credential, or with an unknown one (401)', async () => {
    const none = await op(t.gw.operatorUrl, null, 'GET', '/whoami');
    expect(none.status).toBe(401);
    expect(errorCode(none)).toBe('invalid_operator_credential');
    const unknown = await op(t.gw.operatorUrl, 'fop_not-a-real-one', 'GET', '/whoami');
    expect(unknown.status).toBe(401);
  });

  it('never accepts a driver token or a fleet API key, in any scheme', async () => {
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    for (const headers of [
      bearer(token),
      bearer(API_KEY),
      { authorization: `ApiKey ${API_KEY}` },
      { authorization: `ApiKey ${operator}` },
    ]) {
      const res = await op(t.gw.operatorUrl, null, 'GET', '/whoami', undefined, headers);
      expect(res.status).toBe(401);
    }
  });

  it('an operator credential does not work on the driver routes', async () => {
    const mint = await post(
      t.gw.url,
      '/v1/driver-tokens',
      { driverEmail: DRIVERS.ada.email },
      { authorization: `ApiKey ${operator}` },
    );
    expect(mint.status).toBe(401);
    const quote = await post(
      t.gw.url,
      '/v1/sessions/quote',
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      bearer(operator),
    );
    expect(quote.status).toBe(401);
  });

  it('names the operator and its role, never its credential', async () => {
    const res = await op(t.gw.operatorUrl, viewer, 'GET', '/whoami');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'vera', role: 'viewer' });
    expect(JSON.stringify(res.body)).not.toContain(viewer);
  });

  it('a revoked credential is refused at once', async () => {
    const temp = createOperator(t.gw.db, 'temp', 'operator');
    expect((await op(t.gw.operatorUrl, temp, 'GET', '/whoami')).status).toBe(200);
    expect(new OperatorCredentials(t.gw.db).revoke('temp', new Date().toISOString())).toBe(true);
    expect((await op(t.gw.operatorUrl, temp, 'GET', '/whoami')).status).toBe(401);
  });

  it('keeps credentials only as hashes and the audit trail append-only', () => {
    const rows = t.gw.db.prepare('SELECT credential_hash FROM operators').all() as {
      credential_hash: string;
    }[];
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.credential_hash).toMatch(/^[0-9a-f]{64}$/);
    t.gw.db
      .prepare(
        "INSERT INTO operator_audit (at, operator_id, operator_name, action, params, status, result) VALUES ('x', 'o', 'n', 'a', '{}', 200, '{}')",
      )
      .run();
    expect(() => t.gw.db.prepare("UPDATE operator_audit SET action = 'b'").run()).toThrow(
      /append-only/,
    );
    expect(() => t.gw.db.prepare('DELETE FROM operator_audit').run()).toThrow(/append-only/);
  });
});

describe('operator API on its own listener (operator.http)', () => {
  it('serves /admin/v1 there and not on the driver listener', async () => {
    const s = await startTestGateway({ operator: { http: { host: '127.0.0.1', port: 0 } } });
    try {
      expect(s.gw.operatorUrl).not.toBe(s.gw.url);
      const cred = createOperator(s.gw.db, 'lan', 'viewer');
      expect((await op(s.gw.operatorUrl, cred, 'GET', '/whoami')).status).toBe(200);
      const onDriver = await op(s.gw.url, cred, 'GET', '/whoami');
      expect(onDriver.status).toBe(404);
      const driverOnOp = await post(s.gw.operatorUrl, '/v1/driver-tokens', {
        driverEmail: DRIVERS.ada.email,
      });
      expect(driverOnOp.status).toBe(404);
    } finally {
      await s.close();
    }
  });
});
