import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_STATES } from '../src/charging/session-store.js';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { errorCode, mintToken, startSession, type JsonResponse } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import {
  bootedCharger,
  IONIQ,
  ocpp16,
  ocpp201,
  type SimulatedChargePoint,
} from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

const METRICS_TOKEN = 'fmt_test_metrics_token_0000000000000000000001';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format's samples (comments skipped). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] as string] = pair[2] as string;
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The one sample of `name` whose labels include `labels`; undefined when there is none. */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}) {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} is ambiguous`);
  return found[0]?.value;
}

let t: TestGateway;
const chargers: SimulatedChargePoint[] = [];

async function scrape(token: string | null = METRICS_TOKEN): Promise<JsonResponse> {
  const res = await fetch(`${t.gw.operatorUrl}/metrics`, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: res.headers.get('content-type')?.startsWith('application/json')
      ? (JSON.parse(text) as unknown)
      : text,
  };
}
async function samples(): Promise<Sample[]> {
  const res = await scrape();
  expect(res.status).toBe(200);
  return parse(res.body as string);
}
const one = <T>(sql: string): T => t.gw.db.prepare(sql).get() as T;

beforeAll(async () => {
  t = await startTestGateway({ metrics: { bearerTokenSha256: sha256(METRICS_TOKEN) } });
});
afterAll(async () => {
  await Promise.all(chargers.splice(0).map((c) => c.disconnect()));
  await t.close();
});

describe('/metrics', () => {
  it('needs its own bearer token: none, a wrong one or an operator credential is 401', async () => {
    const operator = createOperator(t.gw.db, 'otto', 'operator');
    for (const token of [null, 'nope', operator, API_KEY]) {
      const res = await scrape(token);
      expect(res.status).toBe(401);
      expect(errorCode(res)).toBe('invalid_metrics_token');
    }
    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    // The operator API's routes are counted too, by their pattern.
    expect((await op(t.gw.operatorUrl, operator, 'GET', '/whoami')).status).toBe(200);
    expect(
      value(await samples(), 'fleetgw_http_requests_total', {
        method: 'GET',
        route: '/admin/v1/whoami',
        status: '200',
      }),
    ).toBe(1);
  });

  it('after real sessions on both protocols, the figures are the database’s', async () => {
    const cp16 = await bootedCharger(ocpp16, t.gw, 'CP-1');
    const cp201 = await bootedCharger(ocpp201, t.gw, 'CP-AC', { connectors: 1 });
    chargers.push(cp16, cp201);

    // Two sessions charge and end early (shortfall credited); one Start is refused before any
    // debit, and one is debited and refused by the charger (refunded).
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    for (const [cp, chargerId] of [
      [cp16, 'CP-1'],
      [cp201, 'CP-AC'],
    ] as const) {
      await cp.plugIn(1, IONIQ);
      const started = cp.waitFor('transactionStarted');
      const res = await startSession(
        t.gw.url,
        token,
        { chargerId, connectorId: '1', driverEmail: DRIVERS.ada.email },
        5_000,
      );
      expect(res.status).toBe(200);
      const tx = await started;
      await cp.waitFor(
        'meterValues',
        (m) => m.connectorId === 1 && m.registerWh - tx.meterStart > 2000,
      );
      const stopped = cp.waitFor('transactionStopped');
      await cp.interrupt(1, 'Local');
      await stopped;
    }
    await waitUntil(
      () =>
        one<{ n: number }>("SELECT count(*) AS n FROM sessions WHERE state = 'settled'").n === 2,
      5000,
      'settlement',
    );
    const bola = await mintToken(t.gw.url, API_KEY, DRIVERS.bola.email);
    const poor = await startSession(
      t.gw.url,
      bola,
      { chargerId: 'CP-1', connectorId: '2', driverEmail: DRIVERS.bola.email },
      900_000,
    );
    expect(errorCode(poor)).toBe('insufficient_balance');
    await cp16.disconnect();
    const refusing = await ocpp16.connect(t.gw.ocppUrl, 'CP-1', { remoteStart: 'reject' });
    chargers.push(refusing);
    await waitUntil(
      async () =>
        value(await samples(), 'fleetgw_chargers_connected', { protocol: 'ocpp1.6' }) === 1,
    );
    const rejected = await startSession(
      t.gw.url,
      bola,
      { chargerId: 'CP-1', connectorId: '2', driverEmail: DRIVERS.bola.email },
      500,
    );
    expect(errorCode(rejected)).toBe('charger_rejected');

    const s = await samples();
    expect(value(s, 'fleetgw_chargers_connected', { protocol: 'ocpp1.6' })).toBe(1);
    expect(value(s, 'fleetgw_chargers_connected', { protocol: 'ocpp2.0.1' })).toBe(1);
    expect(value(s, 'fleetgw_chargers_configured')).toBe(3);

    const byState = t.gw.db
      .prepare('SELECT state, count(*) AS n FROM sessions GROUP BY state')
      .all() as { state: string; n: number }[];
    expect(byState).toEqual([
      { state: 'refunded', n: 1 },
      { state: 'settled', n: 2 },
    ]);
    for (const state of SESSION_STATES) {
      expect(value(s, 'fleetgw_sessions', { state }), state).toBe(
        byState.find((r) => r.state === state)?.n ?? 0,
      );
    }
    expect(value(s, 'fleetgw_session_starts_total', { outcome: 'accepted' })).toBe(2);
    expect(value(s, 'fleetgw_session_starts_total', { outcome: 'charger_rejected' })).toBe(1);
    expect(value(s, 'fleetgw_sessions_started_total', { origin: 'app' })).toBe(2);
    expect(value(s, 'fleetgw_sessions_started_total', { origin: 'card' })).toBe(0);
    expect(value(s, 'fleetgw_start_requests_total', { result: 'started' })).toBe(2);
    expect(value(s, 'fleetgw_start_requests_total', { result: 'insufficient_balance' })).toBe(1);
    expect(value(s, 'fleetgw_start_requests_total', { result: 'charger_rejected' })).toBe(1);

    const money = one<{
      delivered: number;
      paid: number;
      overshoot: number;
      charged: number;
      credited: number;
    }>(
      `SELECT sum(delivered_wh) AS delivered, sum(min(delivered_wh, limit_wh)) AS paid,
         sum(max(delivered_wh - limit_wh, 0)) AS overshoot, sum(cost) AS charged,
         sum(credited) AS credited FROM sessions WHERE state = 'settled'`,
    );
    expect(money.delivered).toBeGreaterThan(4000);
    expect(value(s, 'fleetgw_energy_delivered_wh_total')).toBe(money.delivered);
    expect(value(s, 'fleetgw_energy_paid_wh_total')).toBe(money.paid);
    expect(value(s, 'fleetgw_energy_overshoot_wh_total')).toBe(money.overshoot);
    expect(value(s, 'fleetgw_money_charged_ngn_total')).toBe(money.charged);
    expect(value(s, 'fleetgw_money_returned_ngn_total', { kind: 'credit' })).toBe(money.credited);
    expect(value(s, 'fleetgw_money_returned_ngn_total', { kind: 'refund' })).toBe(500);

    const outbox = one<{ depth: number }>(
      'SELECT count(*) AS depth FROM outbox WHERE sent_at IS NULL',
    );
    expect(outbox.depth).toBeGreaterThan(0); // no broker in this test: everything waits
    expect(value(s, 'fleetgw_outbox_depth')).toBe(outbox.depth);
    expect(value(s, 'fleetgw_outbox_oldest_age_seconds')).toBeGreaterThanOrEqual(0);
    const dbPath = t.gw.db.name;
    const size = statSync(dbPath).size + statSync(`${dbPath}-wal`).size;
    expect(value(s, 'fleetgw_database_size_bytes')).toBeGreaterThan(0);
    expect(Math.abs((value(s, 'fleetgw_database_size_bytes') ?? 0) - size)).toBeLessThan(size / 2);

    // In this process: OCPP calls per version, action and direction, HTTP by route pattern.
    expect(
      value(s, 'fleetgw_ocpp_messages_total', {
        protocol: 'ocpp1.6',
        action: 'StartTransaction',
        direction: 'in',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(
      value(s, 'fleetgw_ocpp_messages_total', {
        protocol: 'ocpp2.0.1',
        action: 'RequestStartTransaction',
        direction: 'out',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(
      value(s, 'fleetgw_ocpp_call_duration_seconds_count', {
        protocol: 'ocpp1.6',
        action: 'RemoteStartTransaction',
        direction: 'out',
      }),
    ).toBe(2);
    expect(
      value(s, 'fleetgw_http_requests_total', {
        method: 'POST',
        route: '/v1/sessions',
        status: '200',
      }),
    ).toBe(2);
    expect(
      value(s, 'fleetgw_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v1/sessions',
        status: '402',
      }),
    ).toBe(1);
    // Nothing a client typed becomes a label.
    await fetch(`${t.gw.url}/no/such/path/${'x'.repeat(40)}`);
    const later = await samples();
    expect(later.some((x) => JSON.stringify(x.labels).includes('xxxx'))).toBe(false);
    expect(value(later, 'fleetgw_http_requests_total', { route: 'unmatched', status: '404' })).toBe(
      1,
    );
  });

  it('the database figures survive a restart; in-process counters start again', async () => {
    const before = await samples();
    const reconnected = Promise.all(chargers.slice(1).map((c) => c.waitFor('reconnected')));
    await t.restart();
    await reconnected;
    const after = await samples();
    for (const name of [
      'fleetgw_energy_delivered_wh_total',
      'fleetgw_energy_paid_wh_total',
      'fleetgw_money_charged_ngn_total',
    ]) {
      expect(value(after, name), name).toBe(value(before, name));
    }
    expect(value(after, 'fleetgw_sessions', { state: 'settled' })).toBe(2);
    expect(value(after, 'fleetgw_session_starts_total', { outcome: 'accepted' })).toBe(2);
    expect(value(after, 'fleetgw_start_requests_total', { result: 'started' })).toBeUndefined();
  });

  it('reads the tables other modules add as soon as they exist', async () => {
    let s = await samples();
    expect(s.some((x) => x.name === 'fleetgw_field_deviations_total')).toBe(false);
    const session = one<{ id: string; price: number }>(
      "SELECT id, price_micro_ngn_per_wh AS price FROM sessions WHERE state = 'settled' LIMIT 1",
    );
    t.gw.db.exec(`
      CREATE TABLE IF NOT EXISTS charger_deviations (charger_id TEXT NOT NULL, kind TEXT NOT NULL,
        count INTEGER NOT NULL, first_seen TEXT NOT NULL, last_seen TEXT NOT NULL, example TEXT,
        PRIMARY KEY (charger_id, kind));
      CREATE TABLE IF NOT EXISTS operator_losses (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,
        wh INTEGER NOT NULL, reason TEXT NOT NULL, at TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS stop_attempts (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,
        step TEXT NOT NULL, sent_at TEXT NOT NULL, reply TEXT NOT NULL);
    `);
    const at = new Date().toISOString();
    const deviation = t.gw.db.prepare(
      'INSERT INTO charger_deviations VALUES (?, ?, ?, ?, ?, NULL)',
    );
    deviation.run('CP-1', 'MeterValues value number_as_string', 3, at, at);
    deviation.run('CP-AC', 'MeterValues value number_as_string', 2, at, at);
    t.gw.db
      .prepare(
        "INSERT INTO operator_losses (session_id, wh, reason, at) VALUES (?, 400, 'beyond_paid', ?)",
      )
      .run(session.id, at);
    const attempt = t.gw.db.prepare(
      'INSERT INTO stop_attempts (session_id, step, sent_at, reply) VALUES (?, ?, ?, ?)',
    );
    attempt.run(session.id, 'remote_stop', at, 'no_answer');
    attempt.run(session.id, 'remote_stop', at, 'rejected');
    attempt.run(session.id, 'zero_power', at, 'accepted');

    s = await samples();
    expect(
      value(s, 'fleetgw_field_deviations_total', { kind: 'MeterValues value number_as_string' }),
    ).toBe(5);
    expect(value(s, 'fleetgw_operator_loss_wh_total', { reason: 'beyond_paid' })).toBe(400);
    expect(value(s, 'fleetgw_operator_loss_ngn_total', { reason: 'beyond_paid' })).toBe(
      (400 * session.price) / 1_000_000,
    );
    expect(value(s, 'fleetgw_stop_retries_total')).toBe(1);
    expect(value(s, 'fleetgw_stop_escalations_total')).toBe(1);
    expect(
      value(s, 'fleetgw_stop_attempts_total', { step: 'remote_stop', reply: 'rejected' }),
    ).toBe(1);
  });
});
