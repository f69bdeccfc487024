import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_KEY,
  DRIVERS,
  OTHER_API_KEY,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { mintToken } from './helpers/http.js';
import { hostileValue, hostileString } from './helpers/hostile.js';

/** The documented answers (docs/api.md "Errors"): status → the codes it may carry. */
const DOCUMENTED: Record<number, string[]> = {
  400: ['invalid_request'],
  401: ['invalid_api_key', 'invalid_token', 'token_expired'],
  402: ['insufficient_balance'],
  403: ['token_scope_mismatch'],
  404: ['driver_not_found', 'charger_not_found', 'connector_not_found', 'not_found'],
  405: ['method_not_allowed'],
  409: ['connector_unavailable', 'charger_rejected'],
  413: ['payload_too_large'],
  415: ['unsupported_media_type'],
  429: ['rate_limited'],
  503: ['charger_offline'],
};
/** What a stack trace or an internal detail looks like in a message. */
const INTERNALS = /\bat .+:\d+|node_modules|\/work\/|\.ts:\d|\.js:\d|SQLITE|Error:/;

let t: TestGateway;
let token: string;
let otherToken: string;
beforeAll(async () => {
  t = await startTestGateway({
    http: {
      host: '127.0.0.1',
      port: 0,
      bodyLimitBytes: 4096,
      rateLimits: { mintPerMinute: 1_000_000, driverPerMinute: 1_000_000 },
    },
  });
  token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
  otherToken = await mintToken(t.gw.url, OTHER_API_KEY, DRIVERS.other.email);
});
afterAll(async () => {
  await t.close();
});

function moneySnapshot(): unknown {
  return {
    wallets: t.gw.db.prepare('SELECT * FROM wallets ORDER BY driver_id').all(),
    ledger: t.gw.db.prepare('SELECT * FROM ledger_entries ORDER BY seq').all(),
    sessions: t.gw.db.prepare('SELECT * FROM sessions ORDER BY id').all(),
  };
}

const path = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom('/v1/driver-tokens', '/v1/sessions/quote', '/v1/sessions'),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '/healthz',
      '/v1/sessions/',
      '/v1//sessions',
      '/v1/sessions?amount=1',
      '/v1/%2e%2e/%2e%2e/etc/passwd',
      '/v1/sessions%00',
      '/ocpp/CP-1',
      '/V1/SESSIONS',
    ),
  },
  { weight: 1, arbitrary: hostileString.map((s) => `/${encodeURIComponent(s)}`) },
);

const authorization = fc.oneof(
  fc.constant(undefined),
  fc.constant('apikey'),
  { weight: 4, arbitrary: fc.constant('bearer') },
  fc.constant('bearer-other'),
  fc.constant('apikey-as-bearer'),
  fc.constant('bearer-as-apikey'),
  hostileString.map((s) => `Bearer ${s}`),
  hostileString.map((s) => `ApiKey ${s}`),
  hostileString.filter((s) => /^[\t\x20-\x7e]*$/.test(s)),
);

function authHeader(kind: string | undefined): string | undefined {
  switch (kind) {
    case 'apikey':
      return `ApiKey ${API_KEY}`;
    case 'bearer':
      return `Bearer ${token}`;
    case 'bearer-other':
      return `Bearer ${otherToken}`;
    case 'apikey-as-bearer':
      return `Bearer ${API_KEY}`;
    case 'bearer-as-apikey':
      return `ApiKey ${token}`;
    default:
      return kind;
  }
}

/** A field's value: mostly plausible, often hostile. */
const field = (plausible: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 5, arbitrary: plausible },
    { weight: 2, arbitrary: hostileString },
    { weight: 1, arbitrary: hostileValue },
  );

const sessionFields = {
  chargerId: field(fc.constantFrom('CP-1', 'CP-AC', 'CP-OFF')),
  connectorId: field(fc.constantFrom('1', '2')),
  driverEmail: field(
    fc.constantFrom(DRIVERS.ada.email, DRIVERS.other.email, 'ADA@FLEET.TEST', 'gone@fleet.test'),
  ),
};

/** Sometimes one more field, which the strict schemas must refuse. */
const withExtra = (o: Record<string, unknown>) =>
  fc
    .oneof({ weight: 9, arbitrary: fc.constant(null) }, hostileValue)
    .map((extra) => JSON.stringify(extra === null ? o : { ...o, extra }));

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  fc.constantFrom(
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json; charset=utf-16',
    undefined,
  ),
);

const wrongBody = fc.oneof(
  hostileString,
  fc.constant(''),
  fc.constant('{"driverEmail":"' + 'a'.repeat(5000) + '"}'),
  hostileValue.map((v) => JSON.stringify(v) ?? 'undefined'),
);

interface FuzzRequest {
  method: string;
  path: string;
  auth: string | undefined;
  type: string | undefined;
  body: string;
}

/**
 * Requests shaped like a route's real ones (its credential, every field present with hostile or
 * plausible values) so they get past validation to the checks behind it; and plain chaos.
 */
const request: fc.Arbitrary<FuzzRequest> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      method: fc.constant('POST'),
      path: fc.constant('/v1/driver-tokens'),
      auth: fc.oneof({ weight: 4, arbitrary: fc.constant('apikey') }, authorization),
      type: contentType,
      body: fc.oneof(
        {
          weight: 4,
          arbitrary: sessionFields.driverEmail.chain((e) => withExtra({ driverEmail: e })),
        },
        wrongBody,
      ),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.constantFrom('/v1/sessions/quote', '/v1/sessions').chain((route) =>
      fc.record({
        method: fc.constant('POST'),
        path: fc.constant(route),
        auth: fc.oneof({ weight: 6, arbitrary: fc.constant('bearer') }, authorization),
        type: contentType,
        body: fc.oneof(
          {
            weight: 6,
            arbitrary: fc
              .record({
                ...sessionFields,
                amount: field(fc.integer({ min: -10, max: 2_000_000 })),
                // the amount belongs to a start; now and then on the wrong route or missing
                withAmount: fc
                  .boolean()
                  .map((flip) => (route === '/v1/sessions') !== (flip && Math.random() < 0.2)),
              })
              .chain(({ withAmount, amount, ...rest }) =>
                withExtra(withAmount ? { ...rest, amount } : rest),
              ),
          },
          wrongBody,
        ),
      }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      method: fc.constantFrom('POST', 'GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
      path,
      auth: authorization,
      type: contentType,
      body: wrongBody,
    }),
  },
);

describe('HTTP fuzzing', () => {
  it('hostile requests get only documented answers, never a 500 or internals, and move no money', async () => {
    const before = moneySnapshot();
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(request, async ({ method, path: p, auth, type, body: payload }) => {
        const headers: Record<string, string> = {};
        const a = authHeader(auth);
        if (a !== undefined) headers.authorization = a;
        if (type !== undefined) headers['content-type'] = type;
        const hasBody = method !== 'GET' && method !== 'HEAD';
        let res: Response;
        try {
          res = await fetch(`${t.gw.url}${p}`, {
            method,
            headers,
            body: hasBody ? payload : undefined,
          });
        } catch (err) {
          // fetch itself refuses some header values (e.g. control characters): not our answer
          if (
            err instanceof TypeError &&
            /header|Headers|ByteString/i.test(String(err.cause ?? err.message))
          )
            return;
          throw err;
        }
        const text = await res.text();
        const key = `${res.status}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        if (res.status === 200) {
          // the mint and healthz may succeed; no start can (no charger is online)
          expect(p === '/v1/driver-tokens' || p === '/healthz' || p === '/v1/sessions/quote').toBe(
            true,
          );
          return;
        }
        expect(Object.keys(DOCUMENTED)).toContain(key);
        const parsed = JSON.parse(text) as { error: { code: string; message: string } };
        expect(Object.keys(parsed)).toEqual(['error']);
        expect(DOCUMENTED[res.status]).toContain(parsed.error.code);
        expect(parsed.error.message).not.toMatch(INTERNALS);
        if (res.status === 429) expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      }),
      { numRuns: 2500 },
    );
    expect(moneySnapshot()).toEqual(before);
    expect((await fetch(`${t.gw.url}/healthz`)).status).toBe(200);
    // the fuzzer did reach past authentication and validation
    expect(seen.get('400')).toBeGreaterThan(0);
    expect(
      (seen.get('403') ?? 0) + (seen.get('404') ?? 0) + (seen.get('503') ?? 0),
    ).toBeGreaterThan(0);
  });
});
