import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { mintToken, quote, startSession } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import {
  bootedCharger,
  IONIQ,
  ocpp16,
  type SimulatedChargePoint,
} from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

const EVENING = {
  pricePerKwh: 300,
  windows: [
    { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '18:00', to: '22:00', pricePerKwh: 450 },
  ],
};

interface TariffAnswer {
  id: string;
  version: number;
  pricePerKwh: number;
  windows: unknown[];
  setBy: string;
  now: { pricePerKwh: number; window: string | null; until: string | null };
  connectors: string[];
}

const audit = (t: TestGateway, action: string) =>
  t.gw.db
    .prepare(
      'SELECT operator_name, status, params, result FROM operator_audit WHERE action = ? ORDER BY seq',
    )
    .all(action) as { operator_name: string; status: number; params: string; result: string }[];

describe('tariffs at run time (pricing.tariffSource: database)', () => {
  let t: TestGateway;
  let viewer: string;
  let operator: string;
  const chargers: SimulatedChargePoint[] = [];

  beforeAll(async () => {
    t = await startTestGateway({
      pricing: { tariffSource: 'database' },
      sessions: { startTimeoutSeconds: 2, maxAmount: 1_000_000, stopLeadMilliseconds: 0 },
    });
    viewer = createOperator(t.gw.db, 'vera', 'viewer');
    operator = createOperator(t.gw.db, 'otto', 'operator');
  });
  afterEach(async () => {
    await Promise.all(chargers.splice(0).map((c) => c.disconnect()));
  });
  afterAll(async () => t.close());

  it('the config file seeds the database; a viewer reads them with the price now', async () => {
    const res = await op(t.gw.operatorUrl, viewer, 'GET', '/tariffs');
    expect(res.status).toBe(200);
    const body = res.body as { source: string; timeZone: string; tariffs: TariffAnswer[] };
    expect(body.source).toBe('database');
    expect(body.tariffs.map((x) => [x.id, x.version, x.pricePerKwh, x.setBy])).toEqual([
      ['ac', 1, 250, 'config file'],
      ['dc', 1, 412.5, 'config file'],
    ]);
    expect(body.tariffs[1]).toMatchObject({
      now: { pricePerKwh: 412.5, window: null, until: null },
      connectors: ['CP-1/1', 'CP-1/2'],
    });
  });

  it('an operator creates, replaces and deletes a tariff, each audited; a viewer may not', async () => {
    const refused = await op(t.gw.operatorUrl, viewer, 'PUT', '/tariffs/evening', EVENING);
    expect(refused.status).toBe(403);
    expect(audit(t, 'tariff.put')).toMatchObject([{ operator_name: 'vera', status: 403 }]);
    expect(await op(t.gw.operatorUrl, viewer, 'DELETE', '/tariffs/ac')).toMatchObject({
      status: 403,
    });

    const created = await op(t.gw.operatorUrl, operator, 'PUT', '/tariffs/evening', EVENING);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      id: 'evening',
      version: 1,
      setBy: 'otto',
      connectors: [],
    });
    const replaced = await op(t.gw.operatorUrl, operator, 'PUT', '/tariffs/evening', {
      ...EVENING,
      pricePerKwh: 310.25,
    });
    expect(replaced.body).toMatchObject({ version: 2, pricePerKwh: 310.25 });
    const read = await op(t.gw.operatorUrl, viewer, 'GET', '/tariffs/evening');
    expect(read.body).toMatchObject({ version: 2, pricePerKwh: 310.25, windows: EVENING.windows });

    const puts = audit(t, 'tariff.put').slice(1);
    expect(puts.map((a) => [a.operator_name, a.status, JSON.parse(a.result)])).toEqual([
      ['otto', 200, { version: 1 }],
      ['otto', 200, { version: 2 }],
    ]);
    expect(JSON.parse(puts[1]!.params)).toMatchObject({
      params: { tariffId: 'evening' },
      body: { pricePerKwh: 310.25 },
    });

    const deleted = await op(t.gw.operatorUrl, operator, 'DELETE', '/tariffs/evening');
    expect(deleted).toMatchObject({ status: 200, body: { id: 'evening', deleted: true } });
    expect((await op(t.gw.operatorUrl, viewer, 'GET', '/tariffs/evening')).status).toBe(404);
    expect(audit(t, 'tariff.delete').map((a) => [a.operator_name, a.status])).toEqual([
      ['vera', 403],
      ['otto', 200],
    ]);
    // Every version is kept: a session's recorded version can always be read back.
    expect(
      t.gw.db
        .prepare(
          "SELECT version, spec IS NULL AS gone FROM tariff_versions WHERE tariff_id = 'evening'",
        )
        .all(),
    ).toEqual([
      { version: 1, gone: 0 },
      { version: 2, gone: 0 },
      { version: 3, gone: 1 },
    ]);
  });

  it('refuses overlapping windows, an odd price and deleting a tariff a connector uses', async () => {
    const overlap = await op(t.gw.operatorUrl, operator, 'PUT', '/tariffs/bad', {
      pricePerKwh: 300,
      windows: [
        { days: ['sun'], from: '20:00', to: '02:00', pricePerKwh: 200 },
        { days: ['mon'], from: '01:00', to: '03:00', pricePerKwh: 100 },
      ],
    });
    expect(overlap.status).toBe(400);
    expect(JSON.stringify(overlap.body)).toMatch(/overlaps/);
    const kobo = await op(t.gw.operatorUrl, operator, 'PUT', '/tariffs/bad', {
      pricePerKwh: 300.0001,
    });
    expect(kobo.status).toBe(400);
    const inUse = await op(t.gw.operatorUrl, operator, 'DELETE', '/tariffs/dc');
    expect(inUse).toMatchObject({ status: 409, body: { error: { code: 'tariff_in_use' } } });
    expect((await op(t.gw.operatorUrl, viewer, 'GET', '/tariffs/bad')).status).toBe(404);
  });

  it('a session keeps the price of its Start after the tariff changes; quotes see the new one', async () => {
    const cp = await bootedCharger(ocpp16, t.gw, 'CP-1');
    chargers.push(cp);
    await cp.plugIn(1, IONIQ);
    const target = { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email };
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const before = await quote(t.gw.url, token, target);
    expect(before.body).toMatchObject({ pricePerKwh: 412.5, priceValidUntil: null });

    const amount = 20_000;
    const started = cp.waitFor('transactionStarted', (e) => e.connectorId === 1);
    const res = await startSession(t.gw.url, token, target, amount);
    expect(res.status).toBe(200);
    const { sessionId } = res.body as { sessionId: string };
    const tx = await started;

    // The price rises while the session charges.
    const raised = await op(t.gw.operatorUrl, operator, 'PUT', '/tariffs/dc', { pricePerKwh: 600 });
    expect(raised.body).toMatchObject({ version: 2, now: { pricePerKwh: 600 } });
    const after = await quote(t.gw.url, token, {
      ...target,
      connectorId: '2',
    });
    expect(after.body).toMatchObject({ pricePerKwh: 600 });

    await cp.waitFor(
      'meterValues',
      (m) => m.transactionId === tx.transactionId && m.registerWh - tx.meterStart > 500,
    );
    const stopped = cp.waitFor('transactionStopped', (e) => e.transactionId === tx.transactionId);
    await cp.interrupt(1, 'Local');
    const stop = await stopped;
    const row = await waitUntil(
      () =>
        t.gw.db
          .prepare("SELECT * FROM sessions WHERE id = ? AND state = 'settled'")
          .get(sessionId) as Record<string, unknown> | undefined,
      5000,
      'settled',
    );
    const delivered = stop.meterStop - tx.meterStart;
    expect(row).toMatchObject({
      price_micro_ngn_per_wh: 412_500,
      limit_wh: 48_484, // 20 000 NGN at 412.5 NGN/kWh, not at 600
      tariff_id: 'dc',
      tariff_version: 1,
      tariff_window: null,
      delivered_wh: delivered,
      cost: Math.min(amount, Math.floor((delivered * 412_500) / 1_000_000)),
    });
    const read = await op(t.gw.operatorUrl, viewer, 'GET', `/sessions/${sessionId}`);
    expect(read.body).toMatchObject({
      session: { pricePerKwh: 412.5 },
      tariff: { id: 'dc', version: 1, window: null },
    });
  });

  it('inside a window a quote names its price and end, and a Start records the window', async () => {
    // A window that began a minute ago and lasts two hours, in Lagos wall time (UTC+1, no DST).
    const startMs = Math.floor((Date.now() - 60_000) / 60_000) * 60_000;
    const lagos = (ms: number) => new Date(ms + 3_600_000);
    const hhmm = (ms: number) => lagos(ms).toISOString().slice(11, 16);
    const day = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][
      lagos(startMs).getUTCDay()
    ] as string;
    const window = {
      days: [day],
      from: hhmm(startMs),
      to: hhmm(startMs + 7_200_000),
      pricePerKwh: 500,
    };
    await op(t.gw.operatorUrl, operator, 'PUT', '/tariffs/dc', {
      pricePerKwh: 600,
      windows: [window],
    });
    const cp = await bootedCharger(ocpp16, t.gw, 'CP-1');
    chargers.push(cp);
    await cp.plugIn(2, IONIQ);
    const target = { chargerId: 'CP-1', connectorId: '2', driverEmail: DRIVERS.ada.email };
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const q = (await quote(t.gw.url, token, target)).body as {
      pricePerKwh: number;
      priceValidUntil: string;
    };
    expect(q.pricePerKwh).toBe(500);
    expect(q.priceValidUntil).toBe(new Date(startMs + 7_200_000).toISOString());
    const res = await startSession(t.gw.url, token, target, 1_000);
    expect(res.status).toBe(200);
    const { sessionId } = res.body as { sessionId: string };
    expect(
      t.gw.db
        .prepare(
          'SELECT price_micro_ngn_per_wh, tariff_version, tariff_window FROM sessions WHERE id = ?',
        )
        .get(sessionId),
    ).toEqual({
      price_micro_ngn_per_wh: 500_000,
      tariff_version: 3,
      tariff_window: `${day} ${window.from}-${window.to}`,
    });
    // Back to the price the next test expects.
    await op(t.gw.operatorUrl, operator, 'PUT', '/tariffs/dc', { pricePerKwh: 600 });
  });

  it('after a restart the database keeps the operator’s price; the file’s differing one is named', async () => {
    await t.restart();
    const dc = await op(t.gw.operatorUrl, viewer, 'GET', '/tariffs/dc');
    expect(dc.body).toMatchObject({ pricePerKwh: 600, windows: [], setBy: 'otto' });
    expect(
      t.logLines.some((l) => l.includes('differ from the database') && l.includes('"dc"')),
    ).toBe(true);
  });
});

describe('tariffs kept in the config file (the default)', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterAll(async () => t.close());

  it('the API reads them and refuses changes; the file wins at every start', async () => {
    const operator = createOperator(t.gw.db, 'otto', 'operator');
    const put = await op(t.gw.operatorUrl, operator, 'PUT', '/tariffs/dc', { pricePerKwh: 1 });
    expect(put).toMatchObject({ status: 409, body: { error: { code: 'tariffs_in_config' } } });
    expect(audit(t, 'tariff.put')).toMatchObject([{ status: 409 }]);
    t.configInput.tariffs = { dc: { pricePerKwh: 500 }, ac: { pricePerKwh: 250 } };
    await t.restart();
    const list = await op(t.gw.operatorUrl, operator, 'GET', '/tariffs');
    expect(list.body).toMatchObject({
      source: 'config',
      tariffs: [
        { id: 'ac', version: 1 },
        { id: 'dc', version: 2, pricePerKwh: 500, setBy: 'config file' },
      ],
    });
  });
});
