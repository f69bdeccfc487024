import { afterEach, describe, expect, it } from 'vitest';
import { verifySignature } from '../src/alerts/signature.js';
import { sha256Hex } from '../src/auth/secrets.js';
import type { GatewayConfigInput } from '../src/config/schema.js';
import { openDatabase } from '../src/store/database.js';
import { chargePastTheStop } from './helpers/alert-site.js';
import { makeTestPki, type TestPki } from './helpers/certs.js';
import { Cloud } from './helpers/cloud.js';
import { startTestGateway, testChargers, type TestGateway } from './helpers/gateway.js';
import { freePort, startBroker, type TestBroker } from './helpers/mqtt-broker.js';
import { createOperator, op } from './helpers/operator.js';
import { raw16, type RawStation } from './helpers/raw-stations.js';
import { harness, LIMIT_WH, sleep } from './helpers/session-harness.js';
import { waitUntil } from './helpers/wait.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * Alerts end to end (docs/alerts.md): conditions driven through real chargers on real sockets,
 * each raised once and cleared once, kept in SQLite, read through the operator API, and delivered
 * to a real webhook receiver on 127.0.0.1 (signed, retried from a queue that survives a restart)
 * and to the uplink's MQTT alert topic.
 */

const SECRET = 'test-webhook-secret-0123456789';
/** A few checks of the watch (every 50 ms): long enough for a wrong alert to have appeared. */
const A_FEW_CHECKS_MS = 300;

type AlertsInput = NonNullable<GatewayConfigInput['alerts']>;

function alerts(webhookUrl: string | null, extra: Partial<AlertsInput> = {}): AlertsInput {
  return {
    checkSeconds: 0.05,
    raiseAfterSeconds: 0,
    clearAfterSeconds: 60,
    chargerOfflineSeconds: 300,
    diskFreePercent: 0,
    certificateDays: 0,
    operatorLossWh: 0,
    ...(webhookUrl === null
      ? {}
      : {
          webhook: {
            url: webhookUrl,
            secret: SECRET,
            timeoutSeconds: 0.5,
            retrySeconds: 0.05,
            maxRetrySeconds: 0.2,
          },
        }),
    ...extra,
  };
}

interface AlertRow {
  id: string;
  kind: string;
  subject: string;
  raised_at: string;
  cleared_at: string | null;
  detail: string;
}

const rows = (t: TestGateway, kind: string, subject?: string): AlertRow[] =>
  t.gw.db
    .prepare(
      `SELECT * FROM alerts WHERE kind = ? ${subject === undefined ? '' : 'AND subject = ?'}
       ORDER BY raised_at`,
    )
    .all(...(subject === undefined ? [kind] : [kind, subject])) as AlertRow[];

/** Verified as a receiver does, at `nowMs`, refusing timestamps further than `toleranceS` away. */
function signedRight(
  r: { headers: Record<string, unknown>; body: string },
  nowMs = Date.now(),
  toleranceS = 300,
): boolean {
  return verifySignature(
    SECRET,
    {
      signature: String(r.headers['x-fleetgw-signature']),
      timestamp: String(r.headers['x-fleetgw-timestamp']),
    },
    r.body,
    nowMs,
    toleranceS,
  );
}

const METRICS_TOKEN = 'alerts-test-metrics-token';

/** The alert series of /metrics, by name and labels as printed. */
async function gauges(t: TestGateway): Promise<Record<string, number>> {
  const res = await fetch(`${t.gw.operatorUrl}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  const lines = (await res.text()).split('\n').filter((l) => l.startsWith('fleetgw_alert'));
  return Object.fromEntries(
    lines.map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
  );
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function receiver(port = 0): Promise<WebhookReceiver> {
  const r = new WebhookReceiver(port);
  await r.start();
  cleanups.push(() => r.stop());
  return r;
}

async function gateway(overrides: Partial<GatewayConfigInput>): Promise<TestGateway> {
  const t = await startTestGateway({ chargers: [testChargers()[0]!], ...overrides });
  cleanups.push(() => t.close());
  return t;
}

async function station(t: TestGateway): Promise<RawStation> {
  const s = await raw16.connect(t.gw.ocppUrl, 'CP-1');
  cleanups.push(() => s.close());
  await s.boot();
  return s;
}

describe('alerts: a charger offline', () => {
  it('is raised once after the threshold, cleared once after it is back, and a short drop raises nothing', async () => {
    const hook = await receiver();
    const t = await gateway({ alerts: alerts(hook.url) });
    const offline = () => rows(t, 'charger_offline', 'CP-1');
    const first = await station(t);
    await sleep(A_FEW_CHECKS_MS);
    expect(offline()).toEqual([]);

    await first.close();
    await waitUntil(() => !t.gw.chargers.isOnline('CP-1'), 5000, 'CP-1 offline');
    await sleep(A_FEW_CHECKS_MS);
    t.clock.advance(299_000);
    await sleep(A_FEW_CHECKS_MS);
    expect(offline()).toEqual([]);
    t.clock.advance(2_000);
    await waitUntil(() => offline().length === 1, 5000, 'offline alert');
    const [raised] = offline();
    expect(raised).toMatchObject({ cleared_at: null });
    // Held for the threshold on the gateway's clock (moved 301 s, plus the real time that passed).
    const heldMs = Date.parse(raised!.raised_at) - Date.parse(JSON.parse(raised!.detail).since);
    expect(heldMs).toBeGreaterThanOrEqual(300_000);

    // Back: the alert stays open for clearAfterSeconds, then clears once.
    const second = await station(t);
    await sleep(A_FEW_CHECKS_MS);
    expect(offline()[0]?.cleared_at).toBeNull();
    t.clock.advance(61_000);
    await waitUntil(() => offline()[0]?.cleared_at, 5000, 'offline alert cleared');

    // A drop shorter than the threshold raises nothing.
    await second.close();
    await waitUntil(() => !t.gw.chargers.isOnline('CP-1'), 5000, 'CP-1 offline again');
    await sleep(A_FEW_CHECKS_MS);
    t.clock.advance(200_000);
    await sleep(A_FEW_CHECKS_MS);
    await station(t);
    await sleep(A_FEW_CHECKS_MS);
    t.clock.advance(200_000);
    await sleep(A_FEW_CHECKS_MS);
    expect(offline()).toHaveLength(1);

    // The webhook got exactly the raise and the clear, each signed, each with its own id.
    await waitUntil(() => hook.requests.length >= 2, 5000, 'two webhook events');
    await sleep(A_FEW_CHECKS_MS);
    const events = hook.events();
    expect(events.map((e) => `${e.type} ${e.alert.kind} ${e.alert.subject}`)).toEqual([
      'alert.raised charger_offline CP-1',
      'alert.cleared charger_offline CP-1',
    ]);
    expect(new Set(events.map((e) => e.id)).size).toBe(2);
    for (const r of hook.requests) {
      // The test moved the gateway's clock by 12 minutes since the first event.
      expect(signedRight(r, t.clock.now(), 3600)).toBe(true);
      expect(r.headers['x-fleetgw-event-id']).toBe((JSON.parse(r.body) as { id: string }).id);
      expect(r.headers['content-type']).toBe('application/json');
    }
    // A changed body or another secret does not verify.
    const r0 = hook.requests[0]!;
    const changed = { ...r0, body: r0.body.replace('CP-1', 'CP-2') };
    expect(signedRight(changed, t.clock.now(), 3600)).toBe(false);

    // The operator API: open and closed, and an acknowledgement that is role-checked and audited.
    const viewer = createOperator(t.gw.db, 'night-viewer', 'viewer');
    const operator = createOperator(t.gw.db, 'night-operator', 'operator');
    const open = await op(t.gw.operatorUrl, viewer, 'GET', '/alerts');
    expect(open.body).toEqual({
      alerts: [],
      openCount: 0,
      webhook: { configured: true, undelivered: 0 },
    });
    const closed = await op(t.gw.operatorUrl, viewer, 'GET', '/alerts?state=closed');
    expect(closed.status).toBe(200);
    const [alert] = (closed.body as { alerts: { id: string; kind: string }[] }).alerts;
    expect(alert).toMatchObject({ kind: 'charger_offline', subject: 'CP-1', id: raised!.id });
    // Each of its events with its delivery: the ids the receiver got, taken at the first attempt.
    expect(alert).toMatchObject({
      deliveries: events.map((e) => ({
        eventId: e.id,
        type: e.type,
        attempts: 1,
        lastError: null,
        nextAttemptAt: null,
        deliveredAt: expect.any(String),
        givenUpAt: null,
        waitingBehind: 0,
      })),
    });
    const path = `/alerts/${raised!.id}/acknowledge`;
    expect((await op(t.gw.operatorUrl, viewer, 'POST', path)).status).toBe(403);
    const acked = await op(t.gw.operatorUrl, operator, 'POST', path);
    expect(acked.status).toBe(200);
    expect(acked.body).toMatchObject({ acknowledgedBy: 'night-operator' });
    const audit = await op(t.gw.operatorUrl, viewer, 'GET', '/audit');
    expect((audit.body as { entries: { action: string }[] }).entries[0]).toMatchObject({
      action: 'alert.acknowledge',
      operatorName: 'night-operator',
      status: 200,
    });
    expect((await op(t.gw.operatorUrl, operator, 'POST', '/alerts/nope/acknowledge')).status).toBe(
      404,
    );
  });

  it('a faulted connector is raised while it reports Faulted and cleared once it is Available again', async () => {
    const t = await gateway({ alerts: alerts(null, { clearAfterSeconds: 0 }) });
    const s = await station(t);
    await s.send({
      action: 'StatusNotification',
      params: { connectorId: 2, errorCode: 'GroundFailure', status: 'Faulted' },
    });
    await waitUntil(() => rows(t, 'charger_faulted').length === 1, 5000, 'faulted alert');
    expect(rows(t, 'charger_faulted')[0]).toMatchObject({ subject: 'CP-1/2', cleared_at: null });
    expect(JSON.parse(rows(t, 'charger_faulted')[0]!.detail)).toMatchObject({
      errorCode: 'GroundFailure',
    });
    await s.send(s.status(2, 'Available'));
    await waitUntil(() => rows(t, 'charger_faulted')[0]?.cleared_at, 5000, 'faulted cleared');
    await sleep(A_FEW_CHECKS_MS);
    expect(rows(t, 'charger_faulted')).toHaveLength(1);
  });
});

describe('alerts: the webhook', () => {
  it('is retried after a 500 and a timeout with the same event id, each attempt signed', async () => {
    const hook = await receiver();
    hook.answers.push(500, 'hang');
    // Offline from the start with a threshold of 0: one event at the first check.
    const t = await gateway({ alerts: alerts(hook.url, { chargerOfflineSeconds: 0 }) });
    const delivered = () =>
      t.gw.db.prepare('SELECT * FROM alert_deliveries WHERE delivered_at IS NOT NULL').all() as {
        event_id: string;
        attempts: number;
      }[];
    await waitUntil(() => delivered().length === 1, 10_000, 'delivered after retries');
    expect(hook.requests).toHaveLength(3);
    const ids = hook.requests.map((r) => r.headers['x-fleetgw-event-id']);
    expect(new Set(ids).size).toBe(1);
    expect(new Set(hook.requests.map((r) => r.body)).size).toBe(1);
    for (const r of hook.requests) expect(signedRight(r)).toBe(true);
    // A replay later than the receiver's tolerance (5 minutes) does not verify.
    expect(signedRight(hook.requests[0]!, Date.now() + 10 * 60_000)).toBe(false);
    expect(delivered()[0]).toMatchObject({ event_id: ids[0], attempts: 3 });
    const failed = t.logLines.filter((l) => l.includes('alert webhook: delivery failed'));
    expect(failed.some((l) => l.includes('HTTP 500'))).toBe(true);
    expect(failed.some((l) => l.includes('timed out'))).toBe(true);
  });

  it('keeps undelivered events through a restart and delivers them, once raised, after it', async () => {
    const port = await freePort();
    // Nothing listens yet: every attempt fails to connect.
    const t = await gateway({
      metrics: { bearerTokenSha256: sha256Hex(METRICS_TOKEN) },
      alerts: alerts(`http://127.0.0.1:${port}/hook`, { chargerOfflineSeconds: 0 }),
    });
    const pending = (db = t.gw.db) =>
      db.prepare('SELECT event_id, attempts, delivered_at FROM alert_deliveries').all() as {
        event_id: string;
        attempts: number;
        delivered_at: string | null;
      }[];
    await waitUntil(() => pending()[0]?.attempts, 5000, 'a failed attempt');
    expect(await gauges(t)).toMatchObject({
      'fleetgw_alerts_open{kind="charger_offline"}': 1,
      fleetgw_alert_webhook_undelivered: 1,
    });
    await t.gw.close();
    const db = openDatabase(t.configInput.database!.path!);
    const [queued] = pending(db);
    db.close();
    expect(queued).toMatchObject({ delivered_at: null });

    const hook = await receiver(port);
    await t.restart();
    await waitUntil(() => hook.requests.length >= 1, 5000, 'delivery after the restart');
    await sleep(A_FEW_CHECKS_MS);
    // The same event, and no second raise: the open alert was in the database.
    expect(hook.requests.map((r) => r.headers['x-fleetgw-event-id'])).toEqual([queued!.event_id]);
    expect(rows(t, 'charger_offline', 'CP-1')).toHaveLength(1);
    expect(pending()[0]?.delivered_at).not.toBeNull();
    expect(await gauges(t)).toMatchObject({ fleetgw_alert_webhook_undelivered: 0 });
  });
});

describe('alerts: the uplink', () => {
  let broker: TestBroker | undefined;
  afterEach(async () => {
    await broker?.close();
    broker = undefined;
  });

  it('publishes each event on <prefix>alerts with the webhook event id', async () => {
    broker = await startBroker();
    const hook = await receiver();
    const cloud = await Cloud.connect(broker.url, 'fleetgw/test-site/', 'alerts-cloud');
    cleanups.push(() => void cloud.client.end(true));
    const t = await gateway({
      uplink: { url: broker.url },
      alerts: alerts(hook.url, { chargerOfflineSeconds: 0 }),
    });
    const published = await waitUntil(
      () => cloud.received.find((m) => m.kind === 'alerts'),
      10_000,
      'the alert on MQTT',
    );
    await waitUntil(() => hook.requests.length === 1, 5000, 'the webhook event');
    expect(cloud.schemaErrors).toEqual([]);
    expect(published.body).toMatchObject({
      type: 'alert.raised',
      siteId: 'test-site',
      alert: { kind: 'charger_offline', subject: 'CP-1' },
    });
    expect(published.body.id).toBe(hook.requests[0]!.headers['x-fleetgw-event-id']);
    expect(rows(t, 'charger_offline')).toHaveLength(1);
  });
});

describe('alerts: certificates', () => {
  let pki: TestPki | undefined;
  afterEach(() => {
    pki?.remove();
    pki = undefined;
  });

  it('a listener certificate expiring within certificateDays is raised; one further out is not', async () => {
    pki = makeTestPki();
    // The test certificates are valid for 2 days.
    const ocpp = { tls: { port: 0, cert: pki.serverCert, key: pki.serverKey } };
    const near = await gateway({ ocpp, alerts: alerts(null, { certificateDays: 3 }) });
    await waitUntil(() => rows(near, 'certificate_expiry').length === 1, 5000, 'certificate');
    const [alert] = rows(near, 'certificate_expiry');
    expect(alert).toMatchObject({ subject: 'ocpp.tls', cleared_at: null });
    expect(JSON.parse(alert!.detail)).toMatchObject({ listener: 'ocpp.tls', file: pki.serverCert });

    const far = await gateway({ ocpp, alerts: alerts(null, { certificateDays: 1 }) });
    await sleep(A_FEW_CHECKS_MS);
    expect(rows(far, 'certificate_expiry')).toEqual([]);
  });
});

describe('alerts: a stop past the remote stop, and the operator loss', () => {
  const h = harness({ stopVerifySeconds: 0.2 }, { alerts: alerts(null) });

  it('raises stop_escalated once, clears it when the session settles; the loss stays open until acknowledged', async () => {
    const { station, sessionId } = await h.paidSession(raw16);
    const t = h.t;
    const { tx } = await station.start(10_000);
    // Past the paid 2,424 Wh: every stop is Accepted and the energy keeps rising.
    const register = await chargePastTheStop(
      station,
      tx,
      () => rows(t, 'stop_escalated', sessionId).length > 0,
    );
    const [escalated] = rows(t, 'stop_escalated', sessionId);
    expect(escalated).toMatchObject({ cleared_at: null });
    expect(JSON.parse(escalated!.detail)).toMatchObject({
      chargerId: 'CP-1',
      steps: expect.arrayContaining(['zero_power']),
    });
    expect(rows(t, 'operator_loss')).toEqual([]);

    await station.send(station.end(tx, register, { reason: 'Remote' }));
    await h.settled(sessionId);
    await waitUntil(() => rows(t, 'stop_escalated', sessionId)[0]?.cleared_at, 5000, 'cleared');
    const [loss] = await waitUntil(() => {
      const r = rows(t, 'operator_loss', sessionId);
      return r.length > 0 && r;
    });
    expect(JSON.parse(loss!.detail)).toMatchObject({ wh: register - 10_000 - LIMIT_WH });
    await sleep(A_FEW_CHECKS_MS);
    expect(rows(t, 'stop_escalated')).toHaveLength(1);
    expect(rows(t, 'operator_loss')).toHaveLength(1);
    expect(rows(t, 'operator_loss')[0]?.cleared_at).toBeNull();

    const operator = createOperator(t.gw.db, 'loss-operator', 'operator');
    const acked = await op(t.gw.operatorUrl, operator, 'POST', `/alerts/${loss!.id}/acknowledge`);
    expect(acked.body).toMatchObject({ kind: 'operator_loss', acknowledgedBy: 'loss-operator' });
    expect((acked.body as { clearedAt: string | null }).clearedAt).not.toBeNull();
    await sleep(A_FEW_CHECKS_MS);
    expect(rows(t, 'operator_loss')).toHaveLength(1);
  });
});

describe('alerts: the disk and the outbox', () => {
  it('free space below diskFreePercent and an outbox at outboxDepth are raised, with what was measured', async () => {
    // Below 100 % free is every real file system; the uplink is off, so the outbox only grows
    // (the first alert's own event is a row in it).
    const t = await gateway({
      alerts: alerts(null, { diskFreePercent: 100, outboxDepth: 1 }),
    });
    await waitUntil(() => rows(t, 'disk_space').length === 1, 5000, 'disk alert');
    await waitUntil(() => rows(t, 'outbox_backlog').length === 1, 5000, 'outbox alert');
    expect(JSON.parse(rows(t, 'disk_space')[0]!.detail)).toMatchObject({
      minPercent: 100,
      freeBytes: expect.any(Number),
    });
    expect(rows(t, 'disk_space')[0]!.subject).toBe(t.dir);
    expect(JSON.parse(rows(t, 'outbox_backlog')[0]!.detail)).toMatchObject({ depthLimit: 1 });
    await sleep(A_FEW_CHECKS_MS);
    expect(rows(t, 'disk_space')).toHaveLength(1);
    expect(rows(t, 'outbox_backlog')).toHaveLength(1);
  });
});
