import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_KEY,
  DRIVERS,
  OTHER_API_KEY,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { bearer, errorCode, mintToken, post } from './helpers/http.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

const quoteBody = { chargerId: 'CP-OFF', connectorId: '1', driverEmail: DRIVERS.ada.email };

describe('POST /v1/driver-tokens', () => {
  it('mints an opaque token with an ISO 8601 UTC expiry in milliseconds', async () => {
    const before = t.clock.now();
    const res = await post(
      t.gw.url,
      '/v1/driver-tokens',
      { driverEmail: DRIVERS.ada.email },
      {
        authorization: `ApiKey ${API_KEY}`,
      },
    );
    expect(res.status).toBe(200);
    const body = res.body as { token: string; expiresAt: string };
    expect(Object.keys(body).sort()).toEqual(['expiresAt', 'token']);
    expect(body.token.length).toBeGreaterThanOrEqual(43);
    expect(body.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const ttl = Date.parse(body.expiresAt) - before;
    expect(ttl).toBeGreaterThanOrEqual(900_000 - 1000);
    expect(ttl).toBeLessThanOrEqual(900_000 + 1000);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('compares emails case-insensitively after trimming', async () => {
    const res = await post(
      t.gw.url,
      '/v1/driver-tokens',
      { driverEmail: '  ADA@Fleet.Test ' },
      {
        authorization: `ApiKey ${API_KEY}`,
      },
    );
    expect(res.status).toBe(200);
  });

  it.each([
    ['an unknown key', { authorization: 'ApiKey fgk_not_a_real_key_at_all_000000000' }],
    ['no Authorization header', {}],
    ['a Bearer credential', { authorization: `Bearer ${API_KEY}` }],
    ['a malformed header', { authorization: 'ApiKey' }],
  ])('refuses %s with 401 invalid_api_key', async (_name, headers) => {
    const res = await post(
      t.gw.url,
      '/v1/driver-tokens',
      { driverEmail: DRIVERS.ada.email },
      headers,
    );
    expect(res.status).toBe(401);
    expect(errorCode(res)).toBe('invalid_api_key');
  });

  it.each([
    ['an unknown email', 'nobody@fleet.test'],
    ['an inactive driver', DRIVERS.gone.email],
  ])('answers 404 driver_not_found for %s', async (_name, email) => {
    const res = await post(
      t.gw.url,
      '/v1/driver-tokens',
      { driverEmail: email },
      {
        authorization: `ApiKey ${API_KEY}`,
      },
    );
    expect(res.status).toBe(404);
    expect(errorCode(res)).toBe('driver_not_found');
  });

  it('does not mint for a driver of another fleet', async () => {
    const res = await post(
      t.gw.url,
      '/v1/driver-tokens',
      { driverEmail: DRIVERS.other.email },
      {
        authorization: `ApiKey ${API_KEY}`,
      },
    );
    expect(res.status).toBe(404);
    expect(errorCode(res)).toBe('driver_not_found');
    const own = await post(
      t.gw.url,
      '/v1/driver-tokens',
      { driverEmail: DRIVERS.other.email },
      {
        authorization: `ApiKey ${OTHER_API_KEY}`,
      },
    );
    expect(own.status).toBe(200);
  });
});

describe('driver token on quote and start', () => {
  it.each([
    ['no header', {}],
    ['an unknown token', bearer('fdt_unknown')],
    ['an ApiKey credential', { authorization: `ApiKey ${API_KEY}` }],
    ['a malformed header', { authorization: 'Bearer' }],
  ])('quote and start refuse %s with 401 invalid_token', async (_name, headers) => {
    for (const path of ['/v1/sessions/quote', '/v1/sessions']) {
      const res = await post(t.gw.url, path, { ...quoteBody, amount: 100 }, headers);
      expect(res.status).toBe(401);
      expect(errorCode(res)).toBe('invalid_token');
    }
  });

  it('a token for another driver is refused with 403 token_scope_mismatch on quote and start', async () => {
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const quote = await post(
      t.gw.url,
      '/v1/sessions/quote',
      { ...quoteBody, driverEmail: DRIVERS.bola.email },
      bearer(token),
    );
    expect(quote.status).toBe(403);
    expect(errorCode(quote)).toBe('token_scope_mismatch');
    const start = await post(
      t.gw.url,
      '/v1/sessions',
      { ...quoteBody, driverEmail: DRIVERS.bola.email, amount: 100 },
      bearer(token),
    );
    expect(start.status).toBe(403);
    expect(errorCode(start)).toBe('token_scope_mismatch');
  });

  it('an expired token is refused with 401 token_expired (injected clock, no sleep)', async () => {
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    t.clock.advance(15 * 60 * 1000 + 1);
    try {
      const quote = await post(t.gw.url, '/v1/sessions/quote', quoteBody, bearer(token));
      expect(quote.status).toBe(401);
      expect(errorCode(quote)).toBe('token_expired');
      const start = await post(
        t.gw.url,
        '/v1/sessions',
        { ...quoteBody, amount: 100 },
        bearer(token),
      );
      expect(start.status).toBe(401);
      expect(errorCode(start)).toBe('token_expired');
    } finally {
      t.clock.advance(-(15 * 60 * 1000 + 1));
    }
  });

  it('the token is still valid one millisecond before expiry', async () => {
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    t.clock.advance(15 * 60 * 1000 - 2000);
    try {
      const quote = await post(t.gw.url, '/v1/sessions/quote', quoteBody, bearer(token));
      expect(errorCode(quote)).toBe('charger_offline');
    } finally {
      t.clock.advance(-(15 * 60 * 1000 - 2000));
    }
  });
});
