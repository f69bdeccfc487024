import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { SessionStore } from '../src/charging/session-store.js';
import { Outbox } from '../src/store/outbox.js';
import { Wallet } from '../src/wallet/wallet.js';

import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { rawCharger } from './helpers/raw-charger.js';
import { mintToken, startSession } from './helpers/http.js';
import { IONIQ, PROTOCOLS, type SimulatedChargePoint } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

describe.each(PROTOCOLS)('gateway restart: $name', (protocol) => {
  let t: TestGateway;
  let cp: SimulatedChargePoint | undefined;
  beforeEach(async () => {
    t = await startTestGateway({
      sessions: {
        startTimeoutSeconds: 2,
        maxAmount: 1_000_000,
        stopLeadMilliseconds: 0,
        // Chargers that never come back: refunded after the start timeout (see field-sessions for
        // one that reconnects after a long recovery wait).
        recoveryWaitSeconds: 1,
      },
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

  /** Plugs in on connector 1, starts a 10,000 NGN session and waits for its transaction. */
  async function chargingSession(charger: SimulatedChargePoint) {
    await charger.plugIn(1, IONIQ);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const before = balance();
    const started = charger.waitFor('transactionStarted');
    const res = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      10_000,
    );
    expect(res.status).toBe(200);
    const { sessionId } = res.body as { sessionId: string };
    const tx = await started;
    return { sessionId, tx, before };
  }

  it('a charging session survives a restart and settles once from the charger’s stop', async () => {
    cp = await protocol.connect(t.gw.ocppUrl, 'CP-1', { timeFactor: 60 });
    const { sessionId, tx, before } = await chargingSession(cp);

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

  it('a stop made while the gateway was unreachable arrives on reconnect and settles once', async () => {
    // A short call timeout: the charger gives up on the live call and queues the stop sooner.
    cp = await protocol.connect(t.gw.ocppUrl, 'CP-1', { timeFactor: 60, callTimeoutMs: 2000 });
    const { sessionId, tx, before } = await chargingSession(cp);

    const disconnected = cp.waitFor('disconnected', () => true, 5000);
    await t.gw.close();
    await disconnected;
    // The driver stops at the charger while it cannot reach the gateway: the stop is queued.
    const stopped = cp.waitFor('transactionStopped');
    await cp.interrupt(1, 'Local');
    const stop = await stopped;
    const reconnected = cp.waitFor('reconnected', () => true, 15_000);
    await t.restart();
    await reconnected;
    await waitUntil(() => state(sessionId) === 'settled', 10_000, 'settlement');
    const cost = Math.floor(((stop.meterStop - tx.meterStart) * 412_500) / 1_000_000);
    expect(balance()).toBe(before - cost);
    const outcomes = t.gw.db
      .prepare(
        "SELECT count(*) AS n FROM ledger_entries WHERE session_id = ? AND kind IN ('session_credit', 'session_refund')",
      )
      .get(sessionId) as { n: number };
    expect(outcomes.n).toBe(1);
    expect(verifyLedger(t.gw.db).ok).toBe(true);
  });

  it('on start-up, half-way sessions wait for the charger, then are refunded in full', async () => {
    // Leave three sessions as a crash would: two debited with the remote start's answer lost, one
    // accepted by the charger and waiting for the EV.
    const at = new Date().toISOString();
    const sessions = new SessionStore(t.gw.db);
    const wallet = new Wallet(t.gw.db, new Outbox(t.gw.db));
    const open = (id: string, chargerId: string, connectorId: string) =>
      t.gw.db.transaction(() => {
        sessions.insert({
          id,
          driverId: DRIVERS.ada.id,
          chargerId,
          connectorId,
          amount: 700,
          microNgnPerWh: 412_500,
          limitWh: 1696,
          idToken: `TOKEN${id}`.slice(0, 20),
          createdAt: at,
        });
        wallet.debitSession(DRIVERS.ada.id, id, 700, at);
      })();
    const before = balance();
    open('ses_unanswered', 'CP-1', '1');
    open('ses_waiting', 'CP-1', '2');
    open('ses_started', 'CP-AC', '1');
    sessions.markAuthorized('ses_waiting', at);

    await t.restart();
    expect([state('ses_unanswered'), state('ses_waiting'), state('ses_started')]).toEqual([
      'authorizing',
      'authorized',
      'authorizing',
    ]);
    // The charger that had accepted the lost remote start reports the transaction: it goes on.
    const charger = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD);
    try {
      const reply = (await charger.call('StartTransaction', {
        connectorId: 1,
        idTag: 'TOKENses_started',
        meterStart: 1000,
        timestamp: new Date().toISOString(),
      })) as { idTagInfo: { status: string } };
      expect(reply.idTagInfo.status).toBe('Accepted');
    } finally {
      await charger.close();
    }
    expect(state('ses_started')).toBe('charging');

    await waitUntil(
      () => state('ses_unanswered') === 'refunded' && state('ses_waiting') === 'refunded',
      5000,
      'start timeouts',
    );
    expect(balance()).toBe(before - 700);
    const reasons = t.gw.db
      .prepare("SELECT id, state, end_reason FROM sessions WHERE id LIKE 'ses_%' ORDER BY id")
      .all();
    expect(reasons).toEqual([
      { id: 'ses_started', state: 'charging', end_reason: null },
      { id: 'ses_unanswered', state: 'refunded', end_reason: 'gateway_restarted' },
      { id: 'ses_waiting', state: 'refunded', end_reason: 'ev_not_connected' },
    ]);
    expect(verifyLedger(t.gw.db).ok).toBe(true);
  });
});
