import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/admin/verify-ledger.js';
import { SessionStore } from '../src/charging/session-store.js';
import { Outbox } from '../src/store/outbox.js';
import { Wallet } from '../src/wallet/wallet.js';
import type { ChargePoint16 } from '../simulators/ocpp16/charge-point.js';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { IONIQ, PROTOCOLS } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

describe.each(PROTOCOLS)('gateway restart: $name', (protocol) => {
  let t: TestGateway;
  let cp: ChargePoint16 | undefined;
  beforeEach(async () => {
    t = await startTestGateway({
      sessions: { startTimeoutSeconds: 2, maxAmount: 1_000_000, stopLeadMilliseconds: 0 },
    });
  });
  afterEach(async () => {
    await cp?.disconnect();
    cp = undefined;
    await t.close();
  });

  const state = (id: string) =>
    (t.gw.db.prepare('SELECT state FROM sessions WHERE id = ?').get(id) as { state: string }).state;
  const balance = () =>
    (
      t.gw.db.prepare('SELECT balance FROM wallets WHERE driver_id = ?').get(DRIVERS.ada.id) as {
        balance: number;
      }
    ).balance;

  it('a charging session survives a restart and settles once from the charger’s stop', async () => {
    cp = await protocol.connect(t.gw.ocppUrl, 'CP-1', { timeFactor: 60 });
    await cp.plugIn(1, IONIQ);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const before = balance();
    const started = cp.waitFor('transactionStarted');
    const res = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      10_000,
    );
    expect(res.status).toBe(200);
    const { sessionId } = res.body as { sessionId: string };
    const tx = await started;

    const reconnected = cp.waitFor('reconnected', () => true, 15_000);
    await t.restart();
    await reconnected;
    expect(state(sessionId)).toBe('charging');

    const stopped = cp.waitFor('transactionStopped');
    await cp.interrupt(1, 'Local');
    const stop = await stopped;
    await waitUntil(() => state(sessionId) === 'settled', 5000, 'settlement');
    const cost = Math.floor(((stop.meterStop - tx.meterStart) * 412_500) / 1_000_000);
    expect(balance()).toBe(before - cost);
    expect(verifyLedger(t.gw.db).ok).toBe(true);
  });

  it('on start-up, a remote start left unanswered is refunded and a waiting session keeps its timer', async () => {
    // Leave two sessions as a crash would: one debited but never answered, one accepted and waiting.
    const at = new Date().toISOString();
    const sessions = new SessionStore(t.gw.db);
    const wallet = new Wallet(t.gw.db, new Outbox(t.gw.db));
    const open = (id: string, connectorId: string) =>
      t.gw.db.transaction(() => {
        sessions.insert({
          id,
          driverId: DRIVERS.ada.id,
          chargerId: 'CP-1',
          connectorId,
          amount: 700,
          microNgnPerWh: 412_500,
          limitWh: 1696,
          idToken: `TOKEN${id}`,
          createdAt: at,
        });
        wallet.debitSession(DRIVERS.ada.id, id, 700, at);
      })();
    const before = balance();
    open('ses_unanswered', '1');
    open('ses_waiting', '2');
    sessions.markAuthorized('ses_waiting', at);

    await t.restart();
    expect(state('ses_unanswered')).toBe('refunded');
    expect(state('ses_waiting')).toBe('authorized');
    await waitUntil(() => state('ses_waiting') === 'refunded', 5000, 'start timeout');
    expect(balance()).toBe(before);
    const reasons = t.gw.db
      .prepare("SELECT id, end_reason FROM sessions WHERE id LIKE 'ses_%' ORDER BY id")
      .all();
    expect(reasons).toEqual([
      { id: 'ses_unanswered', end_reason: 'gateway_restarted' },
      { id: 'ses_waiting', end_reason: 'ev_not_connected' },
    ]);
    expect(verifyLedger(t.gw.db).ok).toBe(true);
  });
});
