import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_KEY,
  DRIVERS,
  OTHER_API_KEY,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import {
  SECURITY_HEADERS,
  bearer,
  errorCode,
  mintToken,
  post,
  quote,
  startSession,
} from './helpers/http.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({
    http: { host: '127.0.0.1', port: 0, rateLimits: { mintPerMinute: 3, driverPerMinute: 4 } },
  });
});
afterAll(async () => {
  await t.close();
});

const target = { chargerId: 'CP-OFF', connectorId: '1', driverEmail: DRIVERS.ada.email };
const mint = (apiKey: string, email: string = DRIVERS.ada.email) =>
  post(
    t.gw.url,
    '/v1/driver-tokens',
    { driverEmail: email },
    { authorization: `ApiKey ${apiKey}` },
  );
const moneyRows = () => ({
  wallets: t.gw.db.prepare('SELECT driver_id, balance FROM wallets ORDER BY driver_id').all(),
  ledger: t.gw.db.prepare('SELECT COUNT(*) AS n FROM ledger_entries').get(),
  sessions: t.gw.db.prepare('SELECT COUNT(*) AS n FROM sessions').get(),
});

describe('rate limits', () => {
  it('limits token minting per API key: 429 rate_limited with Retry-After, other keys unaffected, refilled with time', async () => {
    for (let i = 0; i < 3; i++) expect((await mint(API_KEY)).status).toBe(200);
    const limited = await mint(API_KEY);
    expect(limited.status).toBe(429);
    expect(errorCode(limited)).toBe('rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 20).toBe(true);
    // a refused key is not a counted one: unknown keys get 401, not 429
    expect(errorCode(await mint('fgk_unknown_key_0000000000000000000'))).toBe('invalid_api_key');
    expect((await mint(OTHER_API_KEY, DRIVERS.other.email)).status).toBe(200);
    t.clock.advance(retryAfter * 1000);
    expect((await mint(API_KEY)).status).toBe(200);
    t.clock.advance(60_000);
  });

  it('limits quote and start together per driver token, and a limited start moves no money', async () => {
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const before = moneyRows();
    for (let i = 0; i < 3; i++) expect((await quote(t.gw.url, token, target)).status).toBe(503);
    expect((await startSession(t.gw.url, token, target, 100)).status).toBe(503);
    const limitedQuote = await quote(t.gw.url, token, target);
    const limitedStart = await startSession(t.gw.url, token, target, 100);
    for (const res of [limitedQuote, limitedStart]) {
      expect(res.status).toBe(429);
      expect(errorCode(res)).toBe('rate_limited');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // another token (another app session) has its own budget
    const other = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    expect((await quote(t.gw.url, other, target)).status).toBe(503);
    expect(moneyRows()).toEqual(before);
    t.clock.advance(60_000);
  });
});

describe('credentials stay on their own routes', () => {
  it('never takes an API key as a driver token, nor a driver token as an API key', async () => {
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    expect(errorCode(await quote(t.gw.url, API_KEY, target))).toBe('invalid_token');
    expect(errorCode(await startSession(t.gw.url, API_KEY, target, 100))).toBe('invalid_token');
    const apiKeyOnQuote = await post(t.gw.url, '/v1/sessions/quote', target, {
      authorization: `ApiKey ${API_KEY}`,
    });
    expect(apiKeyOnQuote.status).toBe(401);
    expect(errorCode(await mint(token))).toBe('invalid_api_key');
    const bearerOnMint = await post(
      t.gw.url,
      '/v1/driver-tokens',
      { driverEmail: DRIVERS.ada.email },
      bearer(token),
    );
    expect(errorCode(bearerOnMint)).toBe('invalid_api_key');
  });
});

describe('security headers', () => {
  it('are on every answer: success, refusal, unknown route', async () => {
    const answers = [
      await fetch(`${t.gw.url}/healthz`),
      await fetch(`${t.gw.url}/v1/sessions`, { method: 'POST' }),
      await fetch(`${t.gw.url}/nowhere/../etc/passwd`),
    ];
    for (const res of answers) {
      expect(Object.fromEntries(res.headers)).toMatchObject(SECURITY_HEADERS);
      expect(res.headers.get('x-powered-by')).toBeNull();
      expect(res.headers.get('strict-transport-security')).toBeNull(); // plain HTTP here
    }
  });
});
