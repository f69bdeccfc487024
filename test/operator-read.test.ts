import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/auth/secrets.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { bearer, errorCode, mintToken, startSession } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import { IONIQ, ocpp16, type SimulatedChargePoint } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

let t: TestGateway;
let viewer: string;
let cp: SimulatedChargePoint;
let adaToken: string;
let bolaToken: string;
const secrets: string[] = [];

const target = (connectorId: string) => ({
  chargerId: 'CP-1',
  connectorId,
  driverEmail: DRIVERS.ada.email,
});
const state = (id: string) =>
  (t.gw.db.prepare('SELECT state FROM sessions WHERE id = ?').get(id) as { state: string }).state;

/** Starts a session for ada on CP-1, waits until it charges and has energy, returns its id. */
async function charge(connectorId: number, amount: number): Promise<{ id: string; tx: number }> {
  await cp.plugIn(connectorId, IONIQ);
  const started = cp.waitFor('transactionStarted', (e) => e.connectorId === connectorId);
  const res = await startSession(t.gw.url, adaToken, target(String(connectorId)), amount);
  expect(res.status).toBe(200);
  const id = (res.body as { sessionId: string }).sessionId;
  const tx = await started;
  await cp.waitFor(
    'meterValues',
    (m) => m.transactionId === tx.transactionId && m.registerWh - tx.meterStart > 1000,
  );
  return { id, tx: tx.transactionId as number };
}
async function stop(connectorId: number, tx: number, id: string): Promise<void> {
  const stopped = cp.waitFor('transactionStopped', (e) => e.transactionId === tx);
  await cp.interrupt(connectorId, 'Local');
  await stopped;
  await waitUntil(() => state(id) === 'settled' || undefined, 5000, 'settled');
  await cp.unplug(connectorId);
}

beforeAll(async () => {
  t = await startTestGateway();
  viewer = createOperator(t.gw.db, 'vera', 'viewer');
  cp = await ocpp16.connect(t.gw.ocppUrl, 'CP-1', {});
  await waitUntil(
    () =>
      t.gw.db
        .prepare("SELECT 1 FROM charger_info WHERE charger_id = 'CP-1' AND booted_at IS NOT NULL")
        .get(),
    5000,
    'boot',
  );
  adaToken = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
  bolaToken = await mintToken(t.gw.url, API_KEY, DRIVERS.bola.email);
  secrets.push(
    API_KEY,
    sha256Hex(API_KEY),
    adaToken,
    bolaToken,
    viewer,
    CHARGER_PASSWORD,
    'scrypt$',
  );
});
afterAll(async () => {
  await cp.disconnect();
  await t.close();
});

describe('a live session seen by the driver and the operator', () => {
  let first: { id: string; tx: number };

  it('the driver follows its own session; another driver gets 404 as for an unknown id', async () => {
    first = await charge(1, 20_000);
    const own = await fetch(`${t.gw.url}/v1/sessions/${first.id}`, { headers: bearer(adaToken) });
    expect(own.status).toBe(200);
    const body = (await own.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      sessionId: first.id,
      state: 'charging',
      amount: 20_000,
      credited: 0,
      endedAt: null,
    });
    expect(body.energyWh).toBeGreaterThan(0);
    expect(body.cost).toBeLessThanOrEqual(20_000);

    const other = await fetch(`${t.gw.url}/v1/sessions/${first.id}`, {
      headers: bearer(bolaToken),
    });
    const unknown = await fetch(`${t.gw.url}/v1/sessions/no-such-session`, {
      headers: bearer(bolaToken),
    });
    expect(other.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(await other.json()).toEqual(await unknown.json());
    const noToken = await fetch(`${t.gw.url}/v1/sessions/${first.id}`);
    expect(noToken.status).toBe(401);
    const withKey = await fetch(`${t.gw.url}/v1/sessions/${first.id}`, {
      headers: { authorization: `ApiKey ${API_KEY}` },
    });
    expect(withKey.status).toBe(401);
    const viaOperator = await fetch(`${t.gw.url}/v1/sessions/${first.id}`, {
      headers: bearer(viewer),
    });
    expect(viaOperator.status).toBe(401);
  });

  it('a Start on a connector where the driver has an open session names that session', async () => {
    const again = await startSession(t.gw.url, adaToken, target('1'), 1_000);
    expect(again.status).toBe(409);
    expect(errorCode(again)).toBe('connector_unavailable');
    expect((again.body as { error: { message: string } }).error.message).toContain(first.id);
    const bola = await startSession(
      t.gw.url,
      bolaToken,
      { ...target('1'), driverEmail: DRIVERS.bola.email },
      1_000,
    );
    expect(bola.status).toBe(409);
    expect((bola.body as { error: { message: string } }).error.message).not.toContain(first.id);
  });

  it('the operator sees the charger, its connector, the session on it and live power', async () => {
    await waitUntil(
      async () => {
        const r = await op(t.gw.operatorUrl, viewer, 'GET', '/chargers/CP-1');
        const c = (r.body as { connectors: { powerW: number | null }[] }).connectors[0];
        return c?.powerW !== null && c?.powerW !== undefined ? r : undefined;
      },
      5000,
      'live power',
    );
    const res = await op(t.gw.operatorUrl, viewer, 'GET', '/chargers/CP-1');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      chargerId: 'CP-1',
      connected: true,
      securityProfile: 1,
      protocol: 'ocpp1.6',
      deviations: { source: 'charger_deviations', count: 0, kinds: [] },
      connectors: [
        {
          connectorId: '1',
          status: 'charging',
          session: { sessionId: first.id, driverId: DRIVERS.ada.id, state: 'charging' },
        },
        { connectorId: '2', session: null },
      ],
    });
    const body = res.body as { vendor: string | null; connectors: { energyWh: number }[] };
    expect(body.vendor).not.toBeNull();
    expect(body.connectors[0]!.energyWh).toBeGreaterThan(0);

    const list = await op(t.gw.operatorUrl, viewer, 'GET', '/chargers');
    const ids = (list.body as { chargers: { chargerId: string; connected: boolean }[] }).chargers;
    expect(ids.map((c) => [c.chargerId, c.connected])).toEqual([
      ['CP-1', true],
      ['CP-AC', false],
      ['CP-OFF', false],
    ]);
    const status = await op(t.gw.operatorUrl, viewer, 'GET', '/status');
    expect(status.body).toMatchObject({
      siteId: 'test-site',
      chargers: 3,
      chargersOnline: 1,
      openSessions: 1,
    });
    expect((await op(t.gw.operatorUrl, viewer, 'GET', '/chargers/CP-NOPE')).status).toBe(404);
  });

  it("after settlement: the driver sees cost and credit, the operator the session's whole story", async () => {
    await stop(1, first.tx, first.id);
    const driver = await fetch(`${t.gw.url}/v1/sessions/${first.id}`, {
      headers: bearer(adaToken),
    });
    const view = (await driver.json()) as {
      state: string;
      cost: number;
      credited: number;
      endedAt: string;
    };
    expect(view.state).toBe('settled');
    expect(view.cost + view.credited).toBe(20_000);
    expect(view.endedAt).not.toBeNull();

    const story = await op(t.gw.operatorUrl, viewer, 'GET', `/sessions/${first.id}`);
    expect(story.status).toBe(200);
    const s = story.body as {
      session: { state: string; fleetId: string };
      ledger: { kind: string; amount: number }[];
      transaction: { protocol: string; transactionId: number; meterStopWh: number };
      meterSamples: unknown[];
      uplink: { topic: string; sentAt: string | null }[];
      timeline: { event: string }[];
    };
    expect(s.session).toMatchObject({ state: 'settled', fleetId: 'fleet-a' });
    expect(s.ledger.map((e) => [e.kind, e.amount])).toEqual([
      ['session_debit', -20_000],
      ['session_credit', view.credited],
    ]);
    expect(s.transaction).toMatchObject({ protocol: 'ocpp1.6', transactionId: first.tx });
    expect(s.meterSamples.length).toBeGreaterThan(0);
    expect(s.uplink.map((u) => u.topic)).toEqual(expect.arrayContaining(['ledger', 'sessions']));
    expect(s.uplink.every((u) => u.sentAt === null)).toBe(true); // no broker in this test
    expect(s.timeline[0]!.event).toMatch(/^debited 20000 NGN/);
    expect(s.timeline.some((e) => e.event.startsWith('settled'))).toBe(true);
  });

  it('lists sessions by filter with a cursor that does not move as sessions arrive', async () => {
    const second = await charge(2, 5_000);
    await stop(2, second.tx, second.id);
    const page1 = await op(t.gw.operatorUrl, viewer, 'GET', '/sessions?state=settled&limit=1');
    const p1 = page1.body as { items: { sessionId: string }[]; nextCursor: string };
    expect(p1.items.map((i) => i.sessionId)).toEqual([second.id]);
    const third = await charge(1, 3_000); // newer than both: must not appear on page 2
    const page2 = await op(
      t.gw.operatorUrl,
      viewer,
      'GET',
      `/sessions?state=settled,charging&limit=1&cursor=${p1.nextCursor}`,
    );
    const p2 = page2.body as { items: { sessionId: string }[]; nextCursor: string | null };
    expect(p2.items.map((i) => i.sessionId)).toEqual([first.id]);
    const page3 = await op(
      t.gw.operatorUrl,
      viewer,
      'GET',
      `/sessions?state=settled,charging&limit=1&cursor=${p2.nextCursor}`,
    );
    expect(page3.body as { items: unknown[]; nextCursor: null }).toEqual({
      items: [],
      nextCursor: null,
    });

    const open = await op(t.gw.operatorUrl, viewer, 'GET', '/sessions?state=charging');
    expect((open.body as { items: { sessionId: string }[] }).items.map((i) => i.sessionId)).toEqual(
      [third.id],
    );
    const other = await op(
      t.gw.operatorUrl,
      viewer,
      'GET',
      `/sessions?driverId=${DRIVERS.bola.id}`,
    );
    expect((other.body as { items: unknown[] }).items).toEqual([]);
    const byFleet = await op(
      t.gw.operatorUrl,
      viewer,
      'GET',
      '/sessions?fleetId=fleet-a&chargerId=CP-1',
    );
    expect((byFleet.body as { items: unknown[] }).items).toHaveLength(3);
    const future = await op(t.gw.operatorUrl, viewer, 'GET', '/sessions?from=2999-01-01');
    expect((future.body as { items: unknown[] }).items).toEqual([]);
    await stop(1, third.tx, third.id);
  });

  it('exports sessions and the ledger as RFC 4180 CSV with the same filters', async () => {
    const res = await fetch(`${t.gw.operatorUrl}/admin/v1/exports/sessions.csv?state=settled`, {
      headers: bearer(viewer),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const text = await res.text();
    expect(text.endsWith('\r\n')).toBe(true);
    const lines = text.split('\r\n').slice(0, -1);
    expect(lines[0]).toBe(
      'sessionId,fleetId,driverId,chargerId,connectorId,state,amount,pricePerKwh,paidEnergyWh,energyWh,cost,credited,endReason,createdAt,startedAt,endedAt',
    );
    expect(lines).toHaveLength(4);
    expect(lines.slice(1).every((l) => l.includes(',settled,'))).toBe(true);

    const ledger = await fetch(
      `${t.gw.operatorUrl}/admin/v1/exports/ledger.csv?driverId=${DRIVERS.ada.id}&kind=session_debit`,
      { headers: bearer(viewer) },
    );
    const rows = (await ledger.text()).split('\r\n').slice(1, -1);
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.includes(',session_debit,'))).toBe(true);
    const audited = t.gw.db
      .prepare("SELECT action FROM operator_audit WHERE action LIKE 'export.%' ORDER BY seq")
      .all();
    expect(audited).toEqual([{ action: 'export.sessions' }, { action: 'export.ledger' }]);
  });

  it('reads wallets, ledger, uplink, losses and operators; never a secret anywhere', async () => {
    const paths = [
      '/status',
      '/chargers',
      '/chargers/CP-1',
      '/sessions',
      `/sessions/${first.id}`,
      '/fleets',
      '/drivers',
      '/drivers?fleetId=fleet-b',
      `/drivers/${DRIVERS.ada.id}`,
      '/ledger',
      `/ledger?fleetId=fleet-a&kind=opening&limit=500`,
      '/uplink',
      '/uplink/outbox?pending=true&limit=5',
      '/losses',
      '/operators',
      '/fleets/fleet-a/api-keys',
      '/audit',
      '/whoami',
    ];
    for (const path of paths) {
      const res = await op(t.gw.operatorUrl, viewer, 'GET', path);
      expect(res.status, path).toBe(200);
      const text = JSON.stringify(res.body);
      for (const secret of secrets) expect(text, path).not.toContain(secret);
    }
    const drivers = await op(t.gw.operatorUrl, viewer, 'GET', '/drivers?fleetId=fleet-b');
    expect(drivers.body).toEqual({
      drivers: [
        expect.objectContaining({ driverId: DRIVERS.other.id, balance: DRIVERS.other.balance }),
      ],
    });
    const ledger = await op(
      t.gw.operatorUrl,
      viewer,
      'GET',
      '/ledger?fleetId=fleet-a&kind=opening',
    );
    expect((ledger.body as { items: unknown[] }).items).toHaveLength(3);
    const outbox = await op(t.gw.operatorUrl, viewer, 'GET', '/uplink/outbox?pending=true&limit=5');
    expect((outbox.body as { items: unknown[]; nextCursor: string }).nextCursor).not.toBeNull();
    const losses = await op(t.gw.operatorUrl, viewer, 'GET', '/losses');
    expect(losses.body).toMatchObject({ beyondPaidWh: 0, beyondPaidNgn: 0, sessions: [] });
  });

  it('refuses bad queries with 400 and unknown ids with 404', async () => {
    for (const path of [
      '/sessions?state=bogus',
      '/sessions?limit=0',
      '/sessions?limit=501',
      '/sessions?limit=1.5',
      '/sessions?cursor=-1',
      '/sessions?extra=1',
      '/sessions?state=settled&state=charging',
      '/sessions?from=yesterday',
      '/ledger?kind=gift',
      '/uplink/outbox?pending=yes',
      '/exports/sessions.csv?limit=5',
    ]) {
      const res = await op(t.gw.operatorUrl, viewer, 'GET', path);
      expect(res.status, path).toBe(400);
      expect(errorCode(res)).toBe('invalid_request');
    }
    for (const [path, code] of [
      ['/sessions/nope', 'session_not_found'],
      ['/drivers/nope', 'driver_not_found'],
      ['/fleets/nope/api-keys', 'fleet_not_found'],
    ]) {
      const res = await op(t.gw.operatorUrl, viewer, 'GET', path as string);
      expect(res.status, path).toBe(404);
      expect(errorCode(res)).toBe(code);
    }
  });
});
