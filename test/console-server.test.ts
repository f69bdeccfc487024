import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OperatorCredentials } from '../src/auth/operator-credentials.js';
import { sha256Hex } from '../src/auth/secrets.js';
import { connect } from 'node:net';
import { makeTestPki, type TestPki } from './helpers/certs.js';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { errorCode, mintToken, startSession, type JsonResponse } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import {
  bootedCharger,
  IONIQ,
  ocpp16,
  type SimulatedChargePoint,
} from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

const INDEX =
  '<!doctype html><title>console</title><script type="module" src="/console/assets/app-abc.js"></script>';
const APP_JS = 'console.log("console");\n';
const SECRET = 'outside the bundle';

interface Login {
  status: number;
  body: unknown;
  setCookie: string;
  cookie: string;
  csrf: string;
}

async function login(base: string, name: string, credential: string): Promise<Login> {
  const res = await fetch(`${base}/console/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, credential }),
  });
  const body = (await res.json()) as { csrfToken?: string };
  const setCookie = res.headers.get('set-cookie') ?? '';
  return {
    status: res.status,
    body,
    setCookie,
    cookie: setCookie.split(';')[0] ?? '',
    csrf: body.csrfToken ?? '',
  };
}

/** An operator API request carrying the console's cookie (and, if given, headers). */
function withCookie(
  base: string,
  cookie: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  return op(base, null, method, path, body, { cookie, ...headers });
}

/** A raw GET: fetch would normalize `..` out of the path before sending it. */
function rawGet(
  port: number,
  path: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

let t: TestGateway;
let bundle: string;
let operator: string;
let viewer: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-console-'));
  bundle = join(dir, 'console-web');
  mkdirSync(bundle);
  writeFileSync(join(bundle, 'index.html'), INDEX);
  writeFileSync(join(bundle, 'app-abc.js'), APP_JS);
  writeFileSync(join(bundle, 'app-abc.css'), 'body{}');
  mkdirSync(join(bundle, 'sub'));
  writeFileSync(join(dir, 'secret.txt'), SECRET);
  // Long failure waits, so the throttling test does not race the (real) time between requests.
  t = await startTestGateway(
    {
      ocpp: {
        meterSampleIntervalSeconds: 10,
        authFailureDelay: { initialMilliseconds: 10_000, maxMilliseconds: 60_000 },
      },
    },
    { consoleBundleDir: bundle },
  );
  operator = createOperator(t.gw.db, 'otto', 'operator');
  viewer = createOperator(t.gw.db, 'vera', 'viewer');
});
afterAll(async () => {
  await t.close();
  rmSync(join(bundle, '..'), { recursive: true, force: true });
});

describe('console login', () => {
  it('trades name and credential for an HttpOnly, SameSite=Strict cookie and a CSRF token', async () => {
    const l = await login(t.gw.operatorUrl, 'otto', operator);
    expect(l.status).toBe(200);
    expect(l.body).toMatchObject({ operator: { name: 'otto', role: 'operator' } });
    expect(l.csrf.length).toBeGreaterThanOrEqual(32);
    expect(l.cookie).toMatch(/^fg_console=[A-Za-z0-9_-]{40,}$/);
    const flags = l.setCookie.split(';').map((s) => s.trim());
    expect(flags).toEqual(
      expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/', 'Max-Age=43200']),
    );
    expect(flags).not.toContain('Secure');
    expect(JSON.stringify(l.body)).not.toContain(operator);

    // Only the cookie's hash is stored.
    const value = l.cookie.slice('fg_console='.length);
    const rows = t.gw.db.prepare('SELECT cookie_hash FROM console_sessions').all() as {
      cookie_hash: string;
    }[];
    expect(rows.map((r) => r.cookie_hash)).toContain(sha256Hex(value));
    expect(JSON.stringify(rows)).not.toContain(value);

    const who = await fetch(`${t.gw.operatorUrl}/console/session`, {
      headers: { cookie: l.cookie },
    });
    expect(who.status).toBe(200);
    expect(await who.json()).toMatchObject({ operator: { name: 'otto' }, csrfToken: l.csrf });
    const api = await withCookie(t.gw.operatorUrl, l.cookie, 'GET', '/whoami');
    expect(api.status).toBe(200);
    expect(api.body).toMatchObject({ name: 'otto', role: 'operator' });
  });

  it('refuses a wrong credential or a name that is not the credential’s (401), audited', async () => {
    const wrong = await login(t.gw.operatorUrl, 'otto', 'fop_wrong');
    expect(wrong.status).toBe(401);
    expect((wrong.body as { error: { code: string } }).error.code).toBe(
      'invalid_operator_credential',
    );
    expect(wrong.setCookie).toBe('');
    t.clock.advance(60_000);
    const mismatch = await login(t.gw.operatorUrl, 'vera', operator);
    expect(mismatch.status).toBe(401);
    t.clock.advance(60_000);
    const audit = await op(t.gw.operatorUrl, operator, 'GET', '/audit');
    const entries = (
      audit.body as {
        entries: { action: string; status: number; operatorName: string; params: unknown }[];
      }
    ).entries;
    const failed = entries.filter((e) => e.action === 'console.login' && e.status === 401);
    expect(failed.map((e) => e.operatorName)).toEqual(expect.arrayContaining(['otto', 'vera']));
    expect(JSON.stringify(entries)).not.toContain(operator);
    expect(entries.some((e) => e.action === 'console.login' && e.status === 200)).toBe(true);
  });

  it('refuses a login posted from another site’s page (403 csrf_failed)', async () => {
    const res = await fetch(`${t.gw.operatorUrl}/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
      body: JSON.stringify({ name: 'otto', credential: operator }),
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('throttles failed logins from an address: even a right credential waits its turn (429)', async () => {
    expect((await login(t.gw.operatorUrl, 'otto', 'fop_guess-1')).status).toBe(401);
    const locked = await login(t.gw.operatorUrl, 'otto', operator);
    expect(locked.status).toBe(429);
    expect(locked.setCookie).toBe('');
    t.clock.advance(60_000);
    expect((await login(t.gw.operatorUrl, 'otto', operator)).status).toBe(200);
  });

  it('a request that acts needs the CSRF token and, if named, this origin (403 csrf_failed)', async () => {
    const l = await login(t.gw.operatorUrl, 'otto', operator);
    const path = `/drivers/${DRIVERS.ada.id}/top-ups`;
    const body = { amount: 100, reason: 'console test' };
    const key = (k: string) => ({ 'idempotency-key': k });
    const none = await withCookie(t.gw.operatorUrl, l.cookie, 'POST', path, body, key('c-1'));
    expect(none.status).toBe(403);
    expect(errorCode(none)).toBe('csrf_failed');
    const forged = await withCookie(t.gw.operatorUrl, l.cookie, 'POST', path, body, {
      ...key('c-2'),
      'x-csrf-token': 'x'.repeat(l.csrf.length),
    });
    expect(errorCode(forged)).toBe('csrf_failed');
    const elsewhere = await withCookie(t.gw.operatorUrl, l.cookie, 'POST', path, body, {
      ...key('c-3'),
      'x-csrf-token': l.csrf,
      origin: 'https://evil.example',
    });
    expect(elsewhere.status).toBe(403);
    expect(errorCode(elsewhere)).toBe('csrf_failed');
    const host = new URL(t.gw.operatorUrl).host;
    const ok = await withCookie(t.gw.operatorUrl, l.cookie, 'POST', path, body, {
      ...key('c-4'),
      'x-csrf-token': l.csrf,
      origin: `http://${host}`,
    });
    expect(ok.status).toBe(200);
    const balance = t.gw.db
      .prepare('SELECT balance FROM wallets WHERE driver_id = ?')
      .get(DRIVERS.ada.id) as { balance: number };
    expect(balance.balance).toBe(DRIVERS.ada.balance + 100);
  });

  it('a viewer logged in by cookie is refused actions by the server (403)', async () => {
    const l = await login(t.gw.operatorUrl, 'vera', viewer);
    expect(l.body).toMatchObject({ operator: { role: 'viewer' } });
    const res = await withCookie(
      t.gw.operatorUrl,
      l.cookie,
      'POST',
      `/drivers/${DRIVERS.ada.id}/top-ups`,
      { amount: 100, reason: 'viewer try' },
      { 'idempotency-key': 'v-1', 'x-csrf-token': l.csrf },
    );
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('forbidden');
    expect((await withCookie(t.gw.operatorUrl, l.cookie, 'GET', '/whoami')).status).toBe(200);
  });

  it('a revoked operator’s login is dead at once', async () => {
    const temp = createOperator(t.gw.db, 'temp', 'operator');
    const l = await login(t.gw.operatorUrl, 'temp', temp);
    expect((await withCookie(t.gw.operatorUrl, l.cookie, 'GET', '/whoami')).status).toBe(200);
    new OperatorCredentials(t.gw.db).revoke('temp', new Date().toISOString());
    const after = await withCookie(t.gw.operatorUrl, l.cookie, 'GET', '/whoami');
    expect(after.status).toBe(401);
    expect(errorCode(after)).toBe('invalid_operator_credential');
    const who = await fetch(`${t.gw.operatorUrl}/console/session`, {
      headers: { cookie: l.cookie },
    });
    expect(who.status).toBe(401);
  });

  it('a login expires after console.sessionHours', async () => {
    const l = await login(t.gw.operatorUrl, 'otto', operator);
    t.clock.advance(12 * 3_600_000 - 1_000);
    expect((await withCookie(t.gw.operatorUrl, l.cookie, 'GET', '/whoami')).status).toBe(200);
    t.clock.advance(2_000);
    expect((await withCookie(t.gw.operatorUrl, l.cookie, 'GET', '/whoami')).status).toBe(401);
  });

  it('logout needs the CSRF token, clears the cookie and ends the session on the server', async () => {
    const l = await login(t.gw.operatorUrl, 'otto', operator);
    const forged = await fetch(`${t.gw.operatorUrl}/console/session`, {
      method: 'DELETE',
      headers: { cookie: l.cookie },
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('set-cookie')).toBeNull();
    const out = await fetch(`${t.gw.operatorUrl}/console/session`, {
      method: 'DELETE',
      headers: { cookie: l.cookie, 'x-csrf-token': l.csrf },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^fg_console=; .*Max-Age=0/);
    const hash = sha256Hex(l.cookie.slice('fg_console='.length));
    expect(
      t.gw.db.prepare('SELECT 1 FROM console_sessions WHERE cookie_hash = ?').get(hash),
    ).toBeUndefined();
    // The old cookie value, replayed, is worth nothing.
    expect((await withCookie(t.gw.operatorUrl, l.cookie, 'GET', '/whoami')).status).toBe(401);
  });

  it('a Bearer credential still works, and a bad one is not rescued by a good cookie', async () => {
    const l = await login(t.gw.operatorUrl, 'vera', viewer);
    const res = await op(t.gw.operatorUrl, 'fop_nope', 'GET', '/whoami', undefined, {
      cookie: l.cookie,
    });
    expect(res.status).toBe(401);
    expect((await op(t.gw.operatorUrl, operator, 'GET', '/whoami')).status).toBe(200);
  });
});

describe('console page and assets', () => {
  const port = () => Number(new URL(t.gw.operatorUrl).port);

  it('serves index.html for /console and every client route, with the console’s CSP', async () => {
    for (const path of ['/console', '/console/', '/console/sessions/s-1', '/console/chargers']) {
      const res = await rawGet(port(), path);
      expect(res.status, path).toBe(200);
      expect(res.body).toBe(INDEX);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("img-src 'self' data:");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });

  it('serves assets with their content type, cached as immutable', async () => {
    const js = await rawGet(port(), '/console/assets/app-abc.js');
    expect(js.status).toBe(200);
    expect(js.body).toBe(APP_JS);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const css = await rawGet(port(), '/console/assets/app-abc.css');
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const missing = await rawGet(port(), '/console/assets/nope.js');
    expect(missing.status).toBe(404);
    expect(missing.headers['cache-control']).toBe('no-store');
  });

  it('never leaves the bundle directory', async () => {
    for (const path of [
      '/console/assets/../secret.txt',
      '/console/assets/..%2fsecret.txt',
      '/console/assets/%2e%2e/secret.txt',
      '/console/assets/%2e%2e%2fsecret.txt',
      '/console/assets/sub/..%2f..%2fsecret.txt',
      '/console/assets/..%5csecret.txt',
      '/console/assets/sub',
      '/console/assets/%2fetc%2fpasswd',
    ]) {
      const res = await rawGet(port(), path);
      expect(res.body, path).not.toContain(SECRET);
      expect(res.body, path).not.toContain('root:');
      expect([400, 404], path).toContain(res.status);
    }
  });

  it('says the console is not built when the bundle is missing', async () => {
    const s = await startTestGateway({}, { consoleBundleDir: join(bundle, 'absent') });
    try {
      const res = await rawGet(Number(new URL(s.gw.operatorUrl).port), '/console');
      expect(res.status).toBe(503);
      expect(res.body).toContain('console not built: run npm run build');
    } finally {
      await s.close();
    }
  });
});

describe('console over TLS (operator.http.tls)', () => {
  let pki: TestPki;
  let s: TestGateway;
  beforeAll(async () => {
    pki = makeTestPki();
    s = await startTestGateway(
      {
        operator: {
          http: {
            host: '127.0.0.1',
            port: 0,
            tls: { cert: pki.serverCert, key: pki.serverKey },
          },
        },
      },
      { consoleBundleDir: bundle },
    );
  });
  afterAll(async () => {
    await s.close();
    pki.remove();
  });

  it('marks the cookie Secure', async () => {
    const credential = createOperator(s.gw.db, 'tia', 'operator');
    const url = new URL(s.gw.operatorUrl);
    const setCookie = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port: Number(url.port),
          path: '/console/session',
          method: 'POST',
          ca: pki.read(pki.caCert),
          servername: 'localhost',
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          expect(res.statusCode).toBe(200);
          resolve(String(res.headers['set-cookie']?.[0] ?? ''));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ name: 'tia', credential }));
    });
    expect(setCookie.split(';').map((p) => p.trim())).toContain('Secure');
    expect(setCookie).toContain('HttpOnly');
  });
});

interface StreamEvent {
  event: string;
  data: Record<string, unknown>;
}

/** An open GET /admin/v1/events, its events parsed as they arrive. */
function openStream(
  baseUrl: string,
  headers: Record<string, string>,
): Promise<{ status: number; type: string; events: StreamEvent[]; close: () => void }> {
  const url = new URL(`${baseUrl}/admin/v1/events`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: Number(url.port), path: url.pathname, headers },
      (res) => {
        const events: StreamEvent[] = [];
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const field = (name: string) =>
              block
                .split('\n')
                .find((l) => l.startsWith(`${name}: `))
                ?.slice(name.length + 2);
            const event = field('event');
            const data = field('data');
            if (event && data) {
              events.push({ event, data: JSON.parse(data) as Record<string, unknown> });
            }
          }
        });
        res.on('error', () => undefined);
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type']),
          events,
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('live events (GET /admin/v1/events)', () => {
  // A gateway of its own: the login tests above move the shared one's clock by hours.
  let t: TestGateway;
  let operator: string;
  let viewer: string;
  let cp: SimulatedChargePoint | undefined;
  let sessionId = '';
  beforeAll(async () => {
    t = await startTestGateway();
    operator = createOperator(t.gw.db, 'otto', 'operator');
    viewer = createOperator(t.gw.db, 'vera', 'viewer');
  });
  afterAll(async () => {
    await cp?.disconnect();
    await t.close();
  });

  it('needs a credential or the console cookie', async () => {
    const none = await op(t.gw.operatorUrl, null, 'GET', '/events');
    expect(none.status).toBe(401);
  });

  it('pushes the charger coming online, its session and meter samples, and the ledger', async () => {
    const l = await login(t.gw.operatorUrl, 'vera', viewer);
    const stream = await openStream(t.gw.operatorUrl, { cookie: l.cookie });
    const bearerStream = await openStream(t.gw.operatorUrl, {
      authorization: `Bearer ${operator}`,
    });
    try {
      expect(stream.status).toBe(200);
      expect(stream.type).toBe('text/event-stream; charset=utf-8');
      expect(bearerStream.status).toBe(200);
      await waitUntil(() => t.gw.consoleEvents.clients >= 2, 5000, 'both streams listening');

      cp = await bootedCharger(ocpp16, t.gw, 'CP-1');
      await cp.plugIn(1, IONIQ);
      const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
      const res = await startSession(
        t.gw.url,
        token,
        { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
        2_000,
      );
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      sessionId = (res.body as { sessionId: string }).sessionId;

      const find = (name: string, match: (d: Record<string, unknown>) => boolean) =>
        stream.events.find((e) => e.event === name && match(e.data));
      expect(find('charger.online', (d) => d.chargerId === 'CP-1')).toBeDefined();
      const sample = await waitUntil(
        () =>
          find(
            'meter.sample',
            (d) => d.sessionId === sessionId && typeof d.sessionEnergyWh === 'number',
          ),
        20_000,
        `a meter sample of the session; got ${JSON.stringify(stream.events.map((e) => [e.event, e.data.sessionId ?? null]))}`,
      );
      expect(sample.data).toMatchObject({ chargerId: 'CP-1', connectorId: '1' });
      expect(typeof sample.data.powerW).toBe('number');
      expect(sample.data.sessionEnergyWh as number).toBeGreaterThanOrEqual(0);

      const states = stream.events
        .filter((e) => e.event === 'session.state' && e.data.sessionId === sessionId)
        .map((e) => e.data.state);
      expect(states).toEqual(expect.arrayContaining(['authorizing', 'charging']));
      const debit = find(
        'ledger.entry',
        (d) => (d.entry as { sessionId?: string; kind?: string }).sessionId === sessionId,
      );
      expect(debit?.data.entry).toMatchObject({ kind: 'session_debit', amount: -2_000 });
      expect(
        find('connector.status', (d) => d.chargerId === 'CP-1' && d.connectorId === '1'),
      ).toBeDefined();
      // The Bearer stream saw the same session.
      expect(
        bearerStream.events.some(
          (e) => e.event === 'meter.sample' && e.data.sessionId === sessionId,
        ),
      ).toBe(true);

      // An operator's stop (a Bearer client here) ends it; the settlement comes with its money.
      const stop = await op(t.gw.operatorUrl, operator, 'POST', `/sessions/${sessionId}/stop`);
      expect(stop.status, JSON.stringify(stop.body)).toBe(200);
      const settled = await waitUntil(
        () => find('session.state', (d) => d.sessionId === sessionId && d.state === 'settled'),
        20_000,
        'session.state settled',
      );
      expect(typeof settled.data.cost).toBe('number');
      expect(typeof settled.data.deliveredWh).toBe('number');
      await waitUntil(
        () =>
          find(
            'ledger.entry',
            (d) =>
              (d.entry as { sessionId?: string; kind?: string }).sessionId === sessionId &&
              (d.entry as { kind?: string }).kind === 'session_credit',
          ),
        5000,
        'ledger.entry session_credit',
      );

      await cp.disconnect();
      cp = undefined;
      await waitUntil(
        () => find('charger.offline', (d) => d.chargerId === 'CP-1'),
        10_000,
        'charger.offline',
      );
    } finally {
      stream.close();
      bearerStream.close();
    }
  });

  it('drops a client that does not read, instead of buffering for it without bound', async () => {
    await waitUntil(() => t.gw.consoleEvents.clients === 0, 5000, 'earlier streams closed');
    const url = new URL(t.gw.operatorUrl);
    const socket = connect(Number(url.port), '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    let closed = false;
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    socket.write(
      `GET /admin/v1/events HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${operator}\r\n\r\n`,
    );
    socket.pause(); // never reads: the kernel's buffers fill, then the gateway's queue
    await waitUntil(() => t.gw.consoleEvents.clients === 1, 5000, 'the slow stream listening');
    const filler = 'x'.repeat(16 * 1024);
    let published = 0;
    // Bounded: 64 MiB at most, far beyond the kernel's buffers plus the 256 KiB queue.
    while (t.gw.consoleEvents.clients > 0 && published < 4096) {
      t.gw.consoleEvents.publish('deviation', { chargerId: 'CP-X', kind: filler });
      published += 1;
      if (published % 16 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(t.gw.consoleEvents.clients).toBe(0);
    // What was already in flight drains, then the connection ends: the gateway closed it.
    socket.resume();
    await waitUntil(() => closed, 5000, 'the slow client disconnected');
    expect(t.logLines.some((l) => l.includes('console event stream too slow: dropped'))).toBe(true);
  });

  describe('reads for the console', () => {
    // Runs after the live events test of the same file: its session is settled by now.
    it('a session’s story: timeline kinds, meter series against paid energy, ledger, loss', async () => {
      const res = await op(t.gw.operatorUrl, viewer, 'GET', `/sessions/${sessionId}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const body = res.body as {
        session: { state: string; paidEnergyWh: number; energyWh: number; cost: number };
        timeline: { kind: string; at: string }[];
        meterSeries: { at: string; energyWh: number | null; powerW: number | null }[];
        ledger: { kind: string }[];
        loss: unknown;
      };
      expect(body.session.state).toBe('settled');
      expect(body.session.paidEnergyWh).toBeGreaterThan(0);
      const kinds = body.timeline.map((e) => e.kind);
      for (const k of ['remote_start', 'charging', 'settled', 'ledger']) {
        expect(kinds, k).toContain(k);
      }
      const times = body.timeline.map((e) => e.at);
      expect(times).toEqual([...times].sort());
      expect(body.meterSeries.length).toBeGreaterThan(0);
      expect(body.meterSeries.some((m) => typeof m.energyWh === 'number')).toBe(true);
      expect(body.ledger.map((e) => e.kind)).toEqual(['session_debit', 'session_credit']);
      // Stopped early by the operator: nothing was delivered beyond what was paid.
      expect(body.loss).toBeNull();
    });

    it('energy and revenue per charger today and this month, in the site’s time zone', async () => {
      const res = await op(t.gw.operatorUrl, viewer, 'GET', '/energy');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const body = res.body as {
        timeZone: string;
        today: { from: string; to: string };
        chargers: { chargerId: string; today: Figures; month: Figures }[];
        total: { today: Figures; month: Figures };
      };
      type Figures = { sessions: number; energyWh: number; revenueNgn: number };
      expect(body.timeZone).toBe('Africa/Lagos');
      // Lagos is UTC+1 all year: its days start at 23:00 UTC.
      expect(body.today.from).toMatch(/T23:00:00\.000Z$/);
      const row = t.gw.db
        .prepare('SELECT delivered_wh, cost FROM sessions WHERE id = ?')
        .get(sessionId) as { delivered_wh: number; cost: number };
      const cp1 = body.chargers.find((c) => c.chargerId === 'CP-1');
      expect(cp1?.today).toEqual({ sessions: 1, energyWh: row.delivered_wh, revenueNgn: row.cost });
      expect(cp1?.month).toEqual(cp1?.today);
      expect(body.chargers.find((c) => c.chargerId === 'CP-AC')?.today.sessions).toBe(0);
      expect(body.total.today.revenueNgn).toBe(row.cost);
    });

    it('a charger’s recent OCPP calls, without payloads', async () => {
      const res = await op(t.gw.operatorUrl, viewer, 'GET', '/chargers/CP-1');
      expect(res.status).toBe(200);
      const body = res.body as {
        vendor: string | null;
        bootedAt: string | null;
        recentCalls: { action: string; direction: string; outcome: string }[];
      };
      expect(body.bootedAt).not.toBeNull();
      expect(body.recentCalls).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ action: 'BootNotification', direction: 'in', outcome: 'ok' }),
          expect.objectContaining({ action: 'RemoteStartTransaction', direction: 'out' }),
        ]),
      );
      expect(body.recentCalls.length).toBeLessThanOrEqual(50);
      const idToken = (
        t.gw.db.prepare('SELECT id_token FROM sessions LIMIT 1').get() as { id_token: string }
      ).id_token;
      expect(JSON.stringify(res.body)).not.toContain(idToken);
    });
  });
});
