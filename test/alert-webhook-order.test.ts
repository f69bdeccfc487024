import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfigInput } from '../src/config/schema.js';
import { startTestGateway, testChargers, type TestGateway } from './helpers/gateway.js';
import { createOperator, op } from './helpers/operator.js';
import { raw16 } from './helpers/raw-stations.js';
import { waitUntil } from './helpers/wait.js';
import {
  type Answer,
  type WebhookReceiver as Receiver,
  WebhookReceiver,
} from './helpers/webhook-receiver.js';

/**
 * The webhook's order (docs/alerts.md, Delivery): one queue, head of line. The oldest event not
 * yet delivered is the only one sent, retried with backoff, and nothing newer goes before it,
 * whatever the receiver answers and whenever new events arrive. Real gateway, real receiver on
 * 127.0.0.1, events written through the operator API (test events: the same queue as alerts)
 * and, for the case first seen in the field, by real alerts from a real charger.
 */

const SECRET = 'test-webhook-secret-0123456789';

type Webhook = NonNullable<NonNullable<GatewayConfigInput['alerts']>['webhook']>;

function alertsWith(url: string, webhook: Partial<Webhook>): GatewayConfigInput['alerts'] {
  return {
    checkSeconds: 0.05,
    raiseAfterSeconds: 0,
    clearAfterSeconds: 0,
    chargerOfflineSeconds: 0,
    diskFreePercent: 0,
    certificateDays: 0,
    webhook: { url, secret: SECRET, ...webhook },
  };
}

const eventId = (r: Receiver['requests'][number]): string =>
  String(r.headers['x-fleetgw-event-id']);
const took = (a: Answer): boolean => typeof a === 'number' && a >= 200 && a < 300;

/**
 * What the receiver saw, judged against the events in the order they were written: each taken
 * (2xx) at least once, first taken in that order, and no request for an event while an older one
 * was not yet taken. Returns the broken rule, or null.
 */
function orderBroken(created: readonly string[], seen: Receiver['requests']): string | null {
  const rank = new Map(created.map((id, i) => [id, i]));
  let taken = 0; // events 0..taken-1 have been taken
  for (const [i, r] of seen.entries()) {
    const k = rank.get(eventId(r));
    if (k === undefined) return `request ${i}: an event not written in this run`;
    if (k > taken) return `request ${i}: event ${k} sent while event ${taken} was not taken`;
    if (k === taken && took(r.answer)) taken++;
  }
  return taken === created.length ? null : `only ${taken} of ${created.length} events taken`;
}

describe('the webhook queue: head of line', () => {
  let hook: WebhookReceiver;
  let t: TestGateway;
  let operator: string;

  beforeAll(async () => {
    hook = new WebhookReceiver();
    await hook.start();
    // No charger: the only events are the ones the test writes.
    t = await startTestGateway({
      chargers: [],
      alerts: alertsWith(hook.url, {
        timeoutSeconds: 0.1,
        retrySeconds: 0.01,
        maxRetrySeconds: 0.04,
      }),
    });
    operator = createOperator(t.gw.db, 'order-operator', 'operator');
  });
  afterAll(async () => {
    await t?.close();
    await hook?.stop();
  });

  // Up to 5 events written at random moments (0-40 ms apart) while the receiver follows a script
  // of up to 8 answers (500, 503, no answer within timeoutSeconds, 200; then 200 for good): a run
  // takes 0.1-2 s; 25 runs.
  it('the receiver sees events in the order written, each at least once, none before an older one', async () => {
    const answer = fc.constantFrom<Answer>(500, 503, 'hang', 200, 204);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 5 }),
        fc.array(answer, { maxLength: 8 }),
        async (gaps, script) => {
          hook.requests.length = 0;
          hook.answers.splice(0, hook.answers.length, ...script);
          const created: string[] = [];
          for (const gap of gaps) {
            await new Promise((resolve) => setTimeout(resolve, gap));
            const res = await op(t.gw.operatorUrl, operator, 'POST', '/alerts/test');
            expect(res.status).toBe(202);
            created.push((res.body as { eventId: string }).eventId);
          }
          const last = created[created.length - 1]!;
          await waitUntil(
            async () => {
              const d = await op(t.gw.operatorUrl, operator, 'GET', `/alerts/deliveries/${last}`);
              return (d.body as { deliveredAt: string | null }).deliveredAt !== null;
            },
            15_000,
            'the run delivered',
          );
          // A request after the last event's delivery would be a repeat: none may come.
          await new Promise((resolve) => setTimeout(resolve, 50));
          const broken = orderBroken(created, hook.requests);
          if (broken)
            throw new Error(
              `${broken}: ${JSON.stringify(hook.requests.map((r) => [eventId(r), r.answer]))}`,
            );
        },
      ),
      { numRuns: 25 },
    );
  }, 180_000);
});

describe('the webhook queue: the case seen in the field', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('a receiver answering 500 gets the later clear only after the raise it refused, once it recovers', async () => {
    const hook = new WebhookReceiver();
    await hook.start();
    cleanups.push(() => hook.stop());
    hook.answers.push(500);
    // CP-1 is offline from the start: the raise goes at the first check and is refused; the
    // retry is 2 s away, long enough for the charger to connect and the alert to clear.
    const t = await startTestGateway({
      chargers: [testChargers()[0]!],
      alerts: alertsWith(hook.url, { retrySeconds: 2, maxRetrySeconds: 2, timeoutSeconds: 1 }),
    });
    cleanups.push(() => t.close());
    await waitUntil(() => hook.requests.length === 1, 5000, 'the raise refused');
    const station = await raw16.connect(t.gw.ocppUrl, 'CP-1');
    cleanups.push(() => station.close());
    await station.boot();
    // Both taken: the receiver answered and the gateway wrote it down.
    const undelivered = t.gw.db.prepare(
      'SELECT count(*) AS n FROM alert_deliveries WHERE delivered_at IS NULL',
    );
    await waitUntil(
      () => hook.requests.length === 3 && (undelivered.get() as { n: number }).n === 0,
      10_000,
      'raise, raise again, clear',
    );

    const types = hook.events().map((e) => e.type);
    expect(types).toEqual(['alert.raised', 'alert.raised', 'alert.cleared']);
    expect(hook.requests.map((r) => r.answer)).toEqual([500, 200, 200]);
    const rows = t.gw.db
      .prepare(
        'SELECT body, created_at, delivered_at, attempts FROM alert_deliveries ORDER BY rowid',
      )
      .all() as { body: string; created_at: string; delivered_at: string; attempts: number }[];
    const [raise, clear] = rows;
    // The clear was written while the raise waited: the case where it used to go first.
    expect(Date.parse(clear!.created_at)).toBeLessThan(Date.parse(raise!.delivered_at));
    expect(rows.map((r) => r.attempts)).toEqual([2, 1]);
    expect(Date.parse(clear!.delivered_at)).toBeGreaterThanOrEqual(Date.parse(raise!.delivered_at));
  }, 30_000);

  it('an event the receiver refuses for good (422) is given up at once and the next one goes', async () => {
    const hook = new WebhookReceiver();
    await hook.start();
    cleanups.push(() => hook.stop());
    hook.answers.push(422);
    const t = await startTestGateway({
      chargers: [],
      alerts: alertsWith(hook.url, { retrySeconds: 60 }),
    });
    cleanups.push(() => t.close());
    const operator = createOperator(t.gw.db, 'refused-operator', 'operator');
    const first = await op(t.gw.operatorUrl, operator, 'POST', '/alerts/test');
    const second = await op(t.gw.operatorUrl, operator, 'POST', '/alerts/test');
    const [a, b] = [first.body, second.body] as { eventId: string }[];
    await waitUntil(() => hook.requests.length === 2, 5000, 'both sent');
    expect(hook.requests.map((r) => [eventId(r), r.answer])).toEqual([
      [a!.eventId, 422],
      [b!.eventId, 200],
    ]);
    const refused = await op(t.gw.operatorUrl, operator, 'GET', `/alerts/deliveries/${a!.eventId}`);
    expect(refused.body).toMatchObject({
      attempts: 1,
      lastError: 'HTTP 422',
      givenUpAt: expect.any(String),
      deliveredAt: null,
      nextAttemptAt: null,
    });
    expect(t.logLines.some((l) => l.includes('alert webhook: event refused, given up'))).toBe(true);
  }, 30_000);
});
