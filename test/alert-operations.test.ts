import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery } from '../src/alerts/deliveries.js';
import { verifySignature } from '../src/alerts/signature.js';
import { startTestGateway, testChargers, type TestGateway } from './helpers/gateway.js';
import { createOperator, op } from './helpers/operator.js';
import { waitUntil } from './helpers/wait.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * What an operator does with alerts from outside (docs/alerts.md, docs/operator-api.md): each
 * event's webhook delivery read through the operator API, a test event sent through the real
 * webhook path (signed, queued, audited), and the CLI's `alerts`, `alert acknowledge` and
 * `alert test` against the running gateway.
 */

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');
const SECRET = 'test-webhook-secret-0123456789';

let hook: WebhookReceiver;
let t: TestGateway;
let operator: string;
let viewer: string;

interface AlertBody {
  id: string;
  kind: string;
  subject: string;
  acknowledgedBy: string | null;
  deliveries: Delivery[];
}
interface ListBody {
  alerts: AlertBody[];
  openCount: number;
  webhook: { configured: boolean; undelivered: number };
}

const list = async (credential = viewer): Promise<ListBody> =>
  (await op(t.gw.operatorUrl, credential, 'GET', '/alerts')).body as ListBody;

beforeAll(async () => {
  hook = new WebhookReceiver();
  await hook.start();
  // The receiver refuses the first request: CP-1's offline raise (it never connects) waits 1.5 s.
  hook.answers.push(500);
  t = await startTestGateway({
    chargers: [testChargers()[0]!],
    alerts: {
      checkSeconds: 0.05,
      raiseAfterSeconds: 0,
      chargerOfflineSeconds: 0,
      diskFreePercent: 0,
      certificateDays: 0,
      webhook: {
        url: hook.url,
        secret: SECRET,
        timeoutSeconds: 1,
        retrySeconds: 1.5,
        maxRetrySeconds: 1.5,
      },
    },
  });
  operator = createOperator(t.gw.db, 'ada-ops', 'operator');
  viewer = createOperator(t.gw.db, 'vic-view', 'viewer');
});
afterAll(async () => {
  await t?.close();
  await hook?.stop();
});

describe('alerts through the operator API', () => {
  it('shows each event’s delivery while it is retried, queues a test event behind it, and both arrive in order', async () => {
    const refused = await waitUntil(async () => {
      const [alert] = (await list()).alerts;
      return alert?.deliveries[0]?.attempts === 1 && alert;
    });
    expect(refused).toMatchObject({ kind: 'charger_offline', subject: 'CP-1' });
    expect(refused.deliveries).toEqual([
      {
        eventId: hook.requests[0]!.headers['x-fleetgw-event-id'],
        type: 'alert.raised',
        createdAt: expect.any(String),
        attempts: 1,
        lastError: 'HTTP 500',
        nextAttemptAt: expect.any(String),
        deliveredAt: null,
        givenUpAt: null,
        waitingBehind: 0,
      },
    ]);
    expect((await list()).webhook).toEqual({ configured: true, undelivered: 1 });

    // A viewer may not send one; an operator may, and it waits behind the refused raise.
    expect((await op(t.gw.operatorUrl, viewer, 'POST', '/alerts/test')).status).toBe(403);
    const sent = await op(t.gw.operatorUrl, operator, 'POST', '/alerts/test');
    expect(sent.status).toBe(202);
    const test = sent.body as Delivery;
    expect(test).toMatchObject({ type: 'alert.test', attempts: 0, waitingBehind: 1 });

    const delivered = await waitUntil(async () => {
      const d = await op(t.gw.operatorUrl, viewer, 'GET', `/alerts/deliveries/${test.eventId}`);
      return (d.body as Delivery).deliveredAt !== null && (d.body as Delivery);
    });
    expect(delivered).toMatchObject({ attempts: 1, lastError: null, nextAttemptAt: null });
    const events = hook.events() as unknown as Record<string, unknown>[];
    expect(events.map((e) => e.type)).toEqual(['alert.raised', 'alert.raised', 'alert.test']);
    expect(events[2]).toEqual({
      id: test.eventId,
      type: 'alert.test',
      siteId: 'test-site',
      at: expect.any(String),
      requestedBy: 'ada-ops',
    });
    // Signed like every event (the receiver's check, docs/alerts.md).
    const r = hook.requests[2]!;
    const headers = {
      signature: String(r.headers['x-fleetgw-signature']),
      timestamp: String(r.headers['x-fleetgw-timestamp']),
    };
    expect(verifySignature(SECRET, headers, r.body, Date.now())).toBe(true);
    expect(verifySignature('another-secret-0123456789', headers, r.body, Date.now())).toBe(false);

    const [alert] = (await list()).alerts;
    expect(alert?.deliveries[0]).toMatchObject({
      attempts: 2,
      lastError: 'HTTP 500',
      deliveredAt: expect.any(String),
      nextAttemptAt: null,
    });
    const audit = await op(t.gw.operatorUrl, viewer, 'GET', '/audit');
    const entries = (audit.body as { entries: Record<string, unknown>[] }).entries;
    expect(entries.find((e) => e.action === 'alert.test' && e.status === 202)).toMatchObject({
      operatorName: 'ada-ops',
      result: { eventId: test.eventId },
    });
    expect(entries.find((e) => e.action === 'alert.test' && e.status === 403)).toMatchObject({
      operatorName: 'vic-view',
    });

    const unknown = await op(t.gw.operatorUrl, viewer, 'GET', '/alerts/deliveries/nope');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: { code: 'event_not_found' } });
  }, 30_000);

  it('without a webhook a test event is refused, and alerts have no deliveries', async () => {
    const bare = await startTestGateway({
      chargers: [testChargers()[0]!],
      alerts: { checkSeconds: 0.05, chargerOfflineSeconds: 0, diskFreePercent: 0 },
    });
    try {
      const cred = createOperator(bare.gw.db, 'no-hook', 'operator');
      const sent = await op(bare.gw.operatorUrl, cred, 'POST', '/alerts/test');
      expect(sent.status).toBe(409);
      expect(sent.body).toMatchObject({ error: { code: 'webhook_not_configured' } });
      const answer = await waitUntil(async () => {
        const body = (await op(bare.gw.operatorUrl, cred, 'GET', '/alerts')).body as ListBody;
        return body.alerts.length > 0 && body;
      });
      expect(answer.webhook).toEqual({ configured: false, undelivered: 0 });
      expect(answer.alerts[0]?.deliveries).toEqual([]);
    } finally {
      await bare.close();
    }
  });
});

// Each CLI call is a process of its own (Node and the CLI loaded each time): seconds, not speed.
describe('alerts from the CLI', { timeout: 60_000 }, () => {
  async function cli(credential: string, ...args: string[]) {
    const file = join(t.dir, `${credential.slice(0, 12)}.credential`);
    writeFileSync(file, credential);
    const env: NodeJS.ProcessEnv = { ...process.env, FLEET_GATEWAY_OPERATOR_URL: t.gw.operatorUrl };
    delete env.FLEET_GATEWAY_OPERATOR_CREDENTIAL;
    try {
      const out = await run(process.execPath, [CLI, ...args, '--credential-file', file], { env });
      return { code: 0, ...out };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  it('lists alerts with their delivery, acknowledges one and sends a test event', async () => {
    await waitUntil(async () => (await list()).webhook.undelivered === 0, 10_000, 'queue empty');
    const listed = await cli(viewer, 'alerts');
    expect(listed.code).toBe(0);
    const [alert] = (await list()).alerts;
    expect(listed.stdout).toMatch(
      new RegExp(
        `^${alert!.id} +charger_offline +CP-1 .*raised: delivered .* \\(2 attempts\\)`,
        'm',
      ),
    );
    expect(listed.stdout).toContain('1 open; webhook: 0 undelivered');
    const json = await cli(viewer, 'alerts', '--state', 'all', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ openCount: 1, alerts: [{ id: alert!.id }] });

    const refused = await cli(viewer, 'alert', 'acknowledge', alert!.id);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the viewer role cannot do this');
    const acked = await cli(operator, 'alert', 'acknowledge', alert!.id);
    expect(acked.code).toBe(0);
    expect(acked.stdout).toMatch(
      /^charger_offline CP-1 acknowledged by ada-ops at .*; still open$/m,
    );
    expect((await list()).alerts[0]?.acknowledgedBy).toBe('ada-ops');

    const before = hook.requests.length;
    const tested = await cli(operator, 'alert', 'test');
    expect(tested.code).toBe(0);
    expect(tested.stdout).toMatch(/^test event \S+: delivered \S+ \(1 attempt\)$/m);
    expect(
      hook
        .events()
        .slice(before)
        .map((e) => e.type),
    ).toEqual(['alert.test']);

    // A receiver that refuses: not delivered within --wait is a failed test (exit status 1).
    hook.answers.push(500, 500, 500);
    const failed = await cli(operator, 'alert', 'test', '--wait', '1');
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^test event \S+: waiting \(1 attempt, last HTTP 500, next /m);
  });
});
