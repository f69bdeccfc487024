import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { bearer, errorCode, mintToken, post, type JsonResponse } from './helpers/http.js';
import { rawCharger, type RawClient } from './helpers/raw-charger.js';
import { waitUntil } from './helpers/wait.js';

describe('idempotent Start (Idempotency-Key)', () => {
  let t: TestGateway;
  const chargers: RawClient[] = [];
  beforeEach(async () => {
    t = await startTestGateway();
  });
  afterEach(async () => {
    await Promise.all(chargers.splice(0).map((c) => c.close({ force: true })));
    await t.close();
  });

  /** A 1.6 charger answering RemoteStartTransaction with `status`, after `delayMs`. */
  async function charger(id: string, status = 'Accepted', delayMs = 0): Promise<RawClient> {
    const c = await rawCharger(t.gw.ocppUrl, id, CHARGER_PASSWORD);
    c.handle('RemoteStartTransaction', async () => {
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      return { status };
    });
    chargers.push(c);
    return c;
  }

  const body = (driverEmail: string, amount: number, connectorId = '1', chargerId = 'CP-1') => ({
    chargerId,
    connectorId,
    driverEmail,
    amount,
  });
  const start = (token: string, b: object, key?: string): Promise<JsonResponse> =>
    post(t.gw.url, '/v1/sessions', b, {
      ...bearer(token),
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    });
  const count = (sql: string, ...args: unknown[]) =>
    (t.gw.db.prepare(sql).get(...args) as { n: number }).n;
  const debits = (driverId: string) =>
    count(
      "SELECT count(*) AS n FROM ledger_entries WHERE driver_id = ? AND kind = 'session_debit'",
      driverId,
    );
  const balance = (driverId: string) =>
    count('SELECT balance AS n FROM wallets WHERE driver_id = ?', driverId);
  /** Everything a refused or replayed request must leave as it was. */
  const snapshot = () =>
    ['wallets', 'ledger_entries', 'sessions', 'outbox', 'idempotency_keys'].map((table) =>
      t.gw.db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all(),
    );

  it('a retry with the same key and body returns the first response, also after a restart, with one debit', async () => {
    await charger('CP-1');
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const first = await start(token, body(DRIVERS.ada.email, 2000), 'order-7f3a-0001');
    expect(first.status).toBe(200);
    const before = snapshot();

    // The same JSON with its fields in another order is the same request.
    const reordered = {
      amount: 2000,
      driverEmail: DRIVERS.ada.email,
      connectorId: '1',
      chargerId: 'CP-1',
    };
    const again = await start(token, reordered, 'order-7f3a-0001');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(snapshot()).toEqual(before);

    await t.restart();
    // The client's pooled keep-alive socket died with the old server: the first fetch may fail.
    const token2 = await waitUntil(() =>
      mintToken(t.gw.url, API_KEY, DRIVERS.ada.email).catch(() => undefined),
    );
    const afterRestart = await start(token2, body(DRIVERS.ada.email, 2000), 'order-7f3a-0001');
    expect(afterRestart.status).toBe(200);
    expect(afterRestart.body).toEqual(first.body);
    expect(debits(DRIVERS.ada.id)).toBe(1);
    expect(balance(DRIVERS.ada.id)).toBe(DRIVERS.ada.balance - 2000);
    expect(verifyLedger(t.gw.db).ok).toBe(true);
  });

  it('the same key with another body is refused with 422 idempotency_key_reused and changes nothing', async () => {
    await charger('CP-1');
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    expect((await start(token, body(DRIVERS.ada.email, 2000), 'k-1')).status).toBe(200);
    const before = snapshot();
    for (const other of [
      body(DRIVERS.ada.email, 2001),
      body(DRIVERS.ada.email, 2000, '2'),
      body(DRIVERS.ada.email, 2000, '1', 'CP-AC'),
    ]) {
      const res = await start(token, other, 'k-1');
      expect(res.status).toBe(422);
      expect(errorCode(res)).toBe('idempotency_key_reused');
    }
    expect(snapshot()).toEqual(before);
  });

  it('keys are scoped to the driver: two drivers may use the same key', async () => {
    await charger('CP-1');
    const ada = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const bola = await mintToken(t.gw.url, API_KEY, DRIVERS.bola.email);
    const a = await start(ada, body(DRIVERS.ada.email, 1000, '1'), 'shared-key');
    const b = await start(bola, body(DRIVERS.bola.email, 1000, '2'), 'shared-key');
    expect([a.status, b.status]).toEqual([200, 200]);
    expect((a.body as { sessionId: string }).sessionId).not.toBe(
      (b.body as { sessionId: string }).sessionId,
    );
    expect([debits(DRIVERS.ada.id), debits(DRIVERS.bola.id)]).toEqual([1, 1]);
  });

  it('without the header nothing is deduplicated (behaviour unchanged)', async () => {
    await charger('CP-1');
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    expect((await start(token, body(DRIVERS.ada.email, 1000, '1'))).status).toBe(200);
    const second = await start(token, body(DRIVERS.ada.email, 1000, '1'));
    expect(second.status).toBe(409);
    expect(errorCode(second)).toBe('connector_unavailable');
    expect((await start(token, body(DRIVERS.ada.email, 1000, '2'))).status).toBe(200);
    expect(debits(DRIVERS.ada.id)).toBe(2);
    expect(count('SELECT count(*) AS n FROM idempotency_keys')).toBe(0);
  });

  it('a malformed key is 400 invalid_request and moves no money', async () => {
    await charger('CP-1');
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const before = snapshot();
    for (const key of ['', 'x'.repeat(256), 'has space', 'tab\there', 'naïve']) {
      const res = await start(token, body(DRIVERS.ada.email, 1000), key).catch(
        // fetch itself refuses some header values (a tab, non-Latin-1): nothing reached the server
        () => undefined,
      );
      if (!res) continue;
      expect(res.status, JSON.stringify(key)).toBe(400);
      expect(errorCode(res)).toBe('invalid_request');
      expect((res.body as { error: { message: string } }).error.message).toContain(
        'Idempotency-Key',
      );
    }
    expect(snapshot()).toEqual(before);
    expect((await start(token, body(DRIVERS.ada.email, 1000), 'x'.repeat(255))).status).toBe(200);
  });

  it('while the first attempt waits for the charger a retry gets 409 idempotency_key_in_progress, then the first response', async () => {
    await charger('CP-1', 'Accepted', 800);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const first = start(token, body(DRIVERS.ada.email, 1500), 'slow-1');
    await waitUntil(() => count('SELECT count(*) AS n FROM idempotency_keys') === 1);
    const during = await start(token, body(DRIVERS.ada.email, 1500), 'slow-1');
    expect(during.status).toBe(409);
    expect(errorCode(during)).toBe('idempotency_key_in_progress');
    expect(during.headers.get('retry-after')).toBe('1');
    const done = await first;
    expect(done.status).toBe(200);
    const after = await start(token, body(DRIVERS.ada.email, 1500), 'slow-1');
    expect(after.body).toEqual(done.body);
    expect(debits(DRIVERS.ada.id)).toBe(1);
  });

  it('a first attempt the charger refused (refunded) answers every retry with the same error and never starts again', async () => {
    await charger('CP-1', 'Rejected');
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const first = await start(token, body(DRIVERS.ada.email, 1500), 'rej-1');
    expect(first.status).toBe(409);
    expect(errorCode(first)).toBe('charger_rejected');
    const before = snapshot();
    const retry = await start(token, body(DRIVERS.ada.email, 1500), 'rej-1');
    expect(retry.status).toBe(409);
    expect(retry.body).toEqual(first.body);
    expect(snapshot()).toEqual(before);
    expect(balance(DRIVERS.ada.id)).toBe(DRIVERS.ada.balance);
    expect(verifyLedger(t.gw.db).ok).toBe(true);
  });

  it('a refusal before any money moved leaves the key unused', async () => {
    await charger('CP-1');
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.bola.email);
    const tooMuch = await start(token, body(DRIVERS.bola.email, DRIVERS.bola.balance + 1), 'k-b');
    expect(tooMuch.status).toBe(402);
    expect(count('SELECT count(*) AS n FROM idempotency_keys')).toBe(0);
    // The app asks for a smaller amount under the same key: a new request, not a reuse.
    const smaller = await start(token, body(DRIVERS.bola.email, 1000), 'k-b');
    expect(smaller.status).toBe(200);
    expect(debits(DRIVERS.bola.id)).toBe(1);
  });
});
