import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, errorCode, mintToken, post } from './helpers/http.js';

let t: TestGateway;
let token: string;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});
beforeEach(async () => {
  token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
});

const start = {
  chargerId: 'CP-OFF',
  connectorId: '1',
  driverEmail: DRIVERS.ada.email,
  amount: 1000,
};

/** Everything that moves or records money, as a fingerprint that must not change on a refusal. */
function moneyState(): string {
  const q = (sql: string) => JSON.stringify(t.gw.db.prepare(sql).all());
  return [
    q('SELECT * FROM wallets ORDER BY driver_id'),
    q('SELECT count(*) FROM ledger_entries'),
    q('SELECT count(*) FROM sessions'),
    q('SELECT count(*) FROM outbox'),
  ].join('|');
}

async function raw(path: string, init: RequestInit): Promise<{ status: number; code: string }> {
  const res = await fetch(`${t.gw.url}${path}`, init);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(typeof body.error.message).toBe('string');
  return { status: res.status, code: body.error.code };
}

describe('bad input gets a clear 4xx and changes nothing', () => {
  const cases: [string, unknown][] = [
    ['a float amount', { ...start, amount: 10.5 }],
    ['a negative amount', { ...start, amount: -100 }],
    ['a zero amount', { ...start, amount: 0 }],
    ['a huge amount', { ...start, amount: 1e30 }],
    ['an amount above the configured maximum', { ...start, amount: 1_000_001 }],
    ['an amount as a string', { ...start, amount: '1000' }],
    ['an amount as null', { ...start, amount: null }],
    ['a numeric chargerId', { ...start, chargerId: 1 }],
    ['a missing field', { chargerId: 'CP-OFF', connectorId: '1', driverEmail: DRIVERS.ada.email }],
    ['an extra field', { ...start, tip: 5 }],
    ['an empty chargerId', { ...start, chargerId: '' }],
    ['an array body', [start]],
    ['a string body', '"hello"'],
  ];
  it.each(cases)('start with %s → 400 invalid_request', async (_name, body) => {
    const before = moneyState();
    const res = await post(t.gw.url, '/v1/sessions', body, bearer(token));
    expect(res.status).toBe(400);
    expect(errorCode(res)).toBe('invalid_request');
    expect(moneyState()).toBe(before);
  });

  it('names the offending field in the message', async () => {
    const missing = await post(
      t.gw.url,
      '/v1/sessions',
      { ...start, amount: undefined },
      bearer(token),
    );
    expect((missing.body as { error: { message: string } }).error.message).toContain('amount');
    const extra = await post(t.gw.url, '/v1/sessions', { ...start, tip: 1 }, bearer(token));
    expect((extra.body as { error: { message: string } }).error.message).toContain('tip');
    const typed = await post(t.gw.url, '/v1/sessions', { ...start, amount: 1.5 }, bearer(token));
    expect((typed.body as { error: { message: string } }).error.message).toContain('amount');
  });

  it('quote with wrong types, missing or extra fields → 400', async () => {
    for (const body of [
      { chargerId: 'CP-OFF', connectorId: 1, driverEmail: DRIVERS.ada.email },
      { chargerId: 'CP-OFF', driverEmail: DRIVERS.ada.email },
      { chargerId: 'CP-OFF', connectorId: '1', driverEmail: DRIVERS.ada.email, amount: 1 },
    ]) {
      const res = await post(t.gw.url, '/v1/sessions/quote', body, bearer(token));
      expect(res.status).toBe(400);
      expect(errorCode(res)).toBe('invalid_request');
    }
  });

  it('mint with a non-string email or extra field → 400', async () => {
    for (const body of [{ driverEmail: 42 }, { driverEmail: DRIVERS.ada.email, admin: true }, {}]) {
      const res = await post(t.gw.url, '/v1/driver-tokens', body, {
        authorization: `ApiKey ${API_KEY}`,
      });
      expect(res.status).toBe(400);
      expect(errorCode(res)).toBe('invalid_request');
    }
  });

  it('malformed JSON → 400 invalid_request', async () => {
    const before = moneyState();
    const res = await raw('/v1/sessions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(token) },
      body: '{"chargerId": "CP-OFF", "amount": 10',
    });
    expect(res).toEqual({ status: 400, code: 'invalid_request' });
    expect(moneyState()).toBe(before);
  });

  it('an empty JSON body → 400 invalid_request', async () => {
    const res = await raw('/v1/sessions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(token) },
      body: '',
    });
    expect(res).toEqual({ status: 400, code: 'invalid_request' });
  });

  it('a wrong content type → 415 unsupported_media_type', async () => {
    const res = await raw('/v1/sessions', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', ...bearer(token) },
      body: JSON.stringify(start),
    });
    expect(res).toEqual({ status: 415, code: 'unsupported_media_type' });
  });

  it('an enormous body → 413 payload_too_large', async () => {
    const before = moneyState();
    const res = await raw('/v1/sessions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(token) },
      body: JSON.stringify({ ...start, chargerId: 'x'.repeat(2_000_000) }),
    });
    expect(res).toEqual({ status: 413, code: 'payload_too_large' });
    expect(moneyState()).toBe(before);
  });

  it('unknown routes → 404 not_found and wrong methods → 405, same error shape', async () => {
    expect(await raw('/v1/nothing', { method: 'GET' })).toEqual({ status: 404, code: 'not_found' });
    expect(await raw('/v1/sessions', { method: 'GET' })).toEqual({
      status: 405,
      code: 'method_not_allowed',
    });
    const del = await fetch(`${t.gw.url}/v1/driver-tokens`, { method: 'DELETE' });
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('POST');
  });

  it('unknown charger and connector → 404 on quote and start, nothing moved', async () => {
    const before = moneyState();
    for (const path of ['/v1/sessions/quote', '/v1/sessions']) {
      const body = path.endsWith('quote') ? { ...start, amount: undefined } : start;
      const charger = await post(t.gw.url, path, { ...body, chargerId: 'CP-NOPE' }, bearer(token));
      expect(charger.status).toBe(404);
      expect(errorCode(charger)).toBe('charger_not_found');
      const connector = await post(t.gw.url, path, { ...body, connectorId: '9' }, bearer(token));
      expect(connector.status).toBe(404);
      expect(errorCode(connector)).toBe('connector_not_found');
    }
    expect(moneyState()).toBe(before);
  });

  it('a configured charger with no live connection → 503 charger_offline, nothing moved', async () => {
    const before = moneyState();
    const res = await post(t.gw.url, '/v1/sessions', start, bearer(token));
    expect(res.status).toBe(503);
    expect(errorCode(res)).toBe('charger_offline');
    expect(moneyState()).toBe(before);
  });

  it('a driver removed after minting: start → 404 driver_not_found', async () => {
    const gone = await mintToken(t.gw.url, API_KEY, DRIVERS.bola.email);
    t.gw.db.prepare('UPDATE drivers SET active = 0 WHERE id = ?').run(DRIVERS.bola.id);
    try {
      const before = moneyState();
      const res = await post(
        t.gw.url,
        '/v1/sessions',
        { ...start, driverEmail: DRIVERS.bola.email },
        bearer(gone),
      );
      expect(res.status).toBe(404);
      expect(errorCode(res)).toBe('driver_not_found');
      expect(moneyState()).toBe(before);
    } finally {
      t.gw.db.prepare('UPDATE drivers SET active = 1 WHERE id = ?').run(DRIVERS.bola.id);
    }
  });
});

describe('internal failures', () => {
  it('answer 500 internal_error without internals', async () => {
    const broken = await startTestGateway();
    try {
      const ada = await mintToken(broken.gw.url, API_KEY, DRIVERS.ada.email);
      broken.gw.db.close(); // the disk went away under a running gateway
      const res = await post(
        broken.gw.url,
        '/v1/sessions/quote',
        { ...start, amount: undefined },
        bearer(ada),
      );
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: { code: 'internal_error', message: 'internal error' } });
    } finally {
      await broken.close();
    }
  });
});
