import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';

import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { errorCode, mintToken, quote as requestQuote, startSession } from './helpers/http.js';
import { IONIQ, PROTOCOLS, type SimulatedChargePoint } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

interface SessionRow {
  state: string;
  amount: number;
  delivered_wh: number | null;
  cost: number | null;
  credited: number | null;
  limit_wh: number;
  end_reason: string | null;
}

describe.each(PROTOCOLS)('end to end over real sockets: $name', (protocol) => {
  let t: TestGateway;
  const chargers: SimulatedChargePoint[] = [];

  beforeAll(async () => {
    t = await startTestGateway({
      sessions: { startTimeoutSeconds: 1, maxAmount: 1_000_000, stopLeadMilliseconds: 0 },
    });
  });
  afterEach(async () => {
    await Promise.all(chargers.splice(0).map((c) => c.disconnect()));
  });
  afterAll(async () => {
    await t.close();
  });

  async function charger(identity: string, options = {}): Promise<SimulatedChargePoint> {
    const cp = await protocol.connect(t.gw.ocppUrl, identity, options);
    chargers.push(cp);
    await waitUntil(
      () =>
        t.gw.db
          .prepare('SELECT 1 FROM charger_info WHERE charger_id = ? AND booted_at IS NOT NULL')
          .get(identity),
      5000,
      'boot',
    );
    return cp;
  }
  const balance = (driverId: string) =>
    (
      t.gw.db.prepare('SELECT balance FROM wallets WHERE driver_id = ?').get(driverId) as {
        balance: number;
      }
    ).balance;
  const session = (id: string) =>
    t.gw.db.prepare('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow;
  const entries = (id: string) =>
    t.gw.db
      .prepare('SELECT kind, amount FROM ledger_entries WHERE session_id = ? ORDER BY seq')
      .all(id);
  const settledOrRefunded = (id: string) => {
    const s = session(id);
    return s.state === 'settled' || s.state === 'refunded' ? s : undefined;
  };
  function ledgerVerifies() {
    const report = verifyLedger(t.gw.db);
    expect(report.checks.filter((c) => c.violations.length > 0)).toEqual([]);
  }

  it('mint → quote → start → charge → interrupted early → shortfall credited', async () => {
    const cp = await charger('CP-1');
    await cp.plugIn(1, IONIQ);
    await waitUntil(
      () =>
        t.gw.db
          .prepare(
            "SELECT soc_percent FROM connector_state WHERE charger_id = 'CP-1' AND connector_id = '1'",
          )
          .get(),
      5000,
      'SoC',
    );
    const startBalance = balance(DRIVERS.ada.id);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);

    const quote = await requestQuote(t.gw.url, token, {
      chargerId: 'CP-1',
      connectorId: '1',
      driverEmail: DRIVERS.ada.email,
    });
    expect(quote.status).toBe(200);
    expect(quote.body).toMatchObject({
      fleetDriver: true,
      quotedAmount: 23_059, // 77.4 kWh x 65 % / 0.9 = 55.9 kWh x 412.5 NGN/kWh, rounded up
      currency: 'NGN',
      subWalletBalance: startBalance,
      socPercent: 35,
      vehicleModel: 'Hyundai Ioniq 5',
      socSource: 'charger',
    });

    const amount = 20_000;
    const started = cp.waitFor('transactionStarted', (e) => e.connectorId === 1);
    const res = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      amount,
    );
    expect(res.status).toBe(200);
    const body = res.body as { sessionId: string; debited: number; remainingBalance: number };
    expect(Object.keys(body).sort()).toEqual(['debited', 'remainingBalance', 'sessionId']);
    expect(body.debited).toBe(amount);
    expect(body.remainingBalance).toBe(startBalance - amount);
    expect(balance(DRIVERS.ada.id)).toBe(startBalance - amount);
    const tx = await started;

    await cp.waitFor(
      'meterValues',
      (m) => m.transactionId === tx.transactionId && m.registerWh - tx.meterStart > 3000,
    );
    const stopped = cp.waitFor('transactionStopped', (e) => e.transactionId === tx.transactionId);
    await cp.interrupt(1, 'Local');
    const stop = await stopped;
    const s = await waitUntil(() => settledOrRefunded(body.sessionId), 5000, 'settlement');

    const delivered = stop.meterStop - tx.meterStart;
    const cost = Math.floor((delivered * 412_500) / 1_000_000);
    expect(s).toMatchObject({
      state: 'settled',
      delivered_wh: delivered,
      cost,
      credited: amount - cost,
      end_reason: 'Local',
    });
    expect(entries(body.sessionId)).toEqual([
      { kind: 'session_debit', amount: -amount },
      { kind: 'session_credit', amount: amount - cost },
    ]);
    expect(balance(DRIVERS.ada.id)).toBe(startBalance - cost);
    expect(balance(DRIVERS.ada.id)).toBe(body.remainingBalance + (amount - cost));
    ledgerVerifies();
    const events = (
      t.gw.db.prepare("SELECT payload FROM outbox WHERE topic = 'sessions'").all() as {
        payload: string;
      }[]
    )
      .map((r) => JSON.parse(r.payload) as { sessionId: string; state: string })
      .filter((e) => e.sessionId === body.sessionId)
      .map((e) => e.state);
    expect(events).toEqual(
      ['authorizing', 'authorized', 'charging', 'settled'].filter((st) => events.includes(st)),
    );
    expect(events).toContain('settled');
    const logs = t.logLines.join('\n');
    for (const secret of [API_KEY, token, CHARGER_PASSWORD]) expect(logs).not.toContain(secret);
  });

  it('stops the charger when the paid energy is reached, and charges no more than was paid', async () => {
    const cp = await charger('CP-1');
    await cp.plugIn(2, { ...IONIQ, socPercent: 20 });
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const startBalance = balance(DRIVERS.ada.id);
    const amount = 2_000; // 4,848 Wh at 412.5 NGN/kWh
    const remoteStop = cp.waitFor('remoteStop', () => true, 15_000);
    const res = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '2', driverEmail: DRIVERS.ada.email },
      amount,
    );
    expect(res.status).toBe(200);
    const { sessionId } = res.body as { sessionId: string };
    await remoteStop;
    const s = await waitUntil(() => settledOrRefunded(sessionId), 10_000, 'settlement');
    expect(s.state).toBe('settled');
    expect(s.end_reason).toBe('Remote');
    expect(s.limit_wh).toBe(4848);
    // Within one meter interval of the limit either way (10 simulated s at 150 kW = 417 Wh).
    expect(s.delivered_wh).toBeGreaterThan(s.limit_wh - 450);
    expect(s.cost).toBeLessThanOrEqual(amount);
    expect(balance(DRIVERS.ada.id)).toBe(startBalance - (s.cost ?? 0));
    ledgerVerifies();
  });

  it.each([
    { policy: 'reject' as const, status: 409, code: 'charger_rejected', what: 'rejects' },
    { policy: 'ignore' as const, status: 504, code: 'charger_timeout', what: 'never answers' },
  ])('a charger that $what the remote start: $status $code, no money moved', async (c) => {
    const cp = await charger('CP-AC', { connectors: 1, remoteStart: c.policy });
    await cp.plugIn(1, IONIQ);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const before = balance(DRIVERS.ada.id);
    const res = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-AC', connectorId: '1', driverEmail: DRIVERS.ada.email },
      1000,
    );
    expect(res.status).toBe(c.status);
    expect(errorCode(res)).toBe(c.code);
    expect(balance(DRIVERS.ada.id)).toBe(before);
    const s = t.gw.db
      .prepare(
        "SELECT id, state, end_reason FROM sessions WHERE charger_id = 'CP-AC' ORDER BY rowid DESC",
      )
      .get() as { id: string; state: string; end_reason: string };
    expect(s).toMatchObject({ state: 'refunded', end_reason: c.code });
    expect(entries(s.id)).toEqual([
      { kind: 'session_debit', amount: -1000 },
      { kind: 'session_refund', amount: 1000 },
    ]);
    ledgerVerifies();
  });

  it('an EV that never starts charging within the start timeout is refunded in full', async () => {
    await charger('CP-AC', { connectors: 1 }); // nothing plugged: the charger accepts and waits
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const before = balance(DRIVERS.ada.id);
    const res = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-AC', connectorId: '1', driverEmail: DRIVERS.ada.email },
      1500,
    );
    expect(res.status).toBe(200);
    const { sessionId, remainingBalance } = res.body as {
      sessionId: string;
      remainingBalance: number;
    };
    expect(remainingBalance).toBe(before - 1500);
    const s = await waitUntil(() => settledOrRefunded(sessionId), 5000, 'refund');
    expect(s).toMatchObject({ state: 'refunded', end_reason: 'ev_not_connected' });
    expect(balance(DRIVERS.ada.id)).toBe(before);
    ledgerVerifies();
  });

  it('insufficient balance: 402 and nothing moved; the reduced amount the quote allows works', async () => {
    const cp = await charger('CP-1');
    await cp.plugIn(1, IONIQ);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.bola.email);
    const quote = await requestQuote(t.gw.url, token, {
      chargerId: 'CP-1',
      connectorId: '1',
      driverEmail: DRIVERS.bola.email,
    });
    const q = quote.body as {
      quotedAmount: number;
      subWalletBalance: number;
      vehicleModel: string;
    };
    expect(q.subWalletBalance).toBeLessThan(q.quotedAmount);
    expect(q.vehicleModel).toBe('Unknown vehicle'); // no assigned vehicle, and no charger names one
    const before = balance(DRIVERS.bola.id);
    const tooMuch = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.bola.email },
      before + 1,
    );
    expect(tooMuch.status).toBe(402);
    expect(errorCode(tooMuch)).toBe('insufficient_balance');
    expect(balance(DRIVERS.bola.id)).toBe(before);
    const reduced = Math.min(q.quotedAmount, q.subWalletBalance);
    const started = cp.waitFor('transactionStarted', (e) => e.connectorId === 1);
    const ok = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.bola.email },
      reduced,
    );
    expect(ok.status).toBe(200);
    expect((ok.body as { remainingBalance: number }).remainingBalance).toBe(before - reduced);
    const { sessionId } = ok.body as { sessionId: string };
    await started;
    await cp.interrupt(1, 'EVDisconnected');
    await waitUntil(() => settledOrRefunded(sessionId), 5000, 'settlement');
    ledgerVerifies();
  });

  it('a connector in use or faulted: 409 connector_unavailable, nothing moved', async () => {
    const cp = await charger('CP-1');
    await cp.plugIn(1, IONIQ);
    const ada = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const bola = await mintToken(t.gw.url, API_KEY, DRIVERS.bola.email);
    const first = await startSession(
      t.gw.url,
      ada,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      1000,
    );
    expect(first.status).toBe(200);
    const bolaBefore = balance(DRIVERS.bola.id);
    const busy = { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.bola.email };
    for (const res of [
      await requestQuote(t.gw.url, bola, busy),
      await startSession(t.gw.url, bola, busy, 500),
    ]) {
      expect(res.status).toBe(409);
      expect(errorCode(res)).toBe('connector_unavailable');
      // Another driver is not told whose session it is; its own driver is told which one.
      expect(JSON.stringify(res.body)).not.toContain('ses_');
    }
    const own = await requestQuote(t.gw.url, ada, { ...busy, driverEmail: DRIVERS.ada.email });
    expect(own.status).toBe(409);
    expect(errorCode(own)).toBe('connector_unavailable');
    expect(JSON.stringify(own.body)).toContain((first.body as { sessionId: string }).sessionId);
    expect(balance(DRIVERS.bola.id)).toBe(bolaBefore);

    await cp.setStatus(2, 'Faulted', 'GroundFailure');
    await waitUntil(
      () =>
        t.gw.db
          .prepare(
            "SELECT 1 FROM connector_state WHERE charger_id = 'CP-1' AND connector_id = '2' AND status = 'faulted'",
          )
          .get(),
      5000,
      'fault',
    );
    const faulted = await startSession(
      t.gw.url,
      bola,
      { chargerId: 'CP-1', connectorId: '2', driverEmail: DRIVERS.bola.email },
      500,
    );
    expect(faulted.status).toBe(409);
    expect(errorCode(faulted)).toBe('connector_unavailable');
    expect(balance(DRIVERS.bola.id)).toBe(bolaBefore);

    const { sessionId } = first.body as { sessionId: string };
    await waitUntil(() => session(sessionId).state === 'charging', 5000, 'charging');
    await cp.interrupt(1, 'Local');
    await waitUntil(() => settledOrRefunded(sessionId), 5000, 'settlement');
    ledgerVerifies();
  });

  it('a driver removed from the fleet after minting: quote says fleetDriver false, start 404', async () => {
    await charger('CP-AC', { connectors: 1 });
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.bola.email);
    t.gw.db.prepare('UPDATE drivers SET active = 0 WHERE id = ?').run(DRIVERS.bola.id);
    try {
      const quote = await requestQuote(t.gw.url, token, {
        chargerId: 'CP-AC',
        connectorId: '1',
        driverEmail: DRIVERS.bola.email,
      });
      expect(quote.status).toBe(200);
      expect(quote.body).toMatchObject({ fleetDriver: false, socSource: 'unknown', socPercent: 0 });
      const start = await startSession(
        t.gw.url,
        token,
        { chargerId: 'CP-AC', connectorId: '1', driverEmail: DRIVERS.bola.email },
        100,
      );
      expect(start.status).toBe(404);
      expect(errorCode(start)).toBe('driver_not_found');
    } finally {
      t.gw.db.prepare('UPDATE drivers SET active = 1 WHERE id = ?').run(DRIVERS.bola.id);
    }
  });

  it('a charger that disconnects is offline: 503 charger_offline, nothing moved', async () => {
    const cp = await charger('CP-AC', { connectors: 1 });
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    await cp.disconnect();
    const before = balance(DRIVERS.ada.id);
    const res = await waitUntil(
      async () => {
        const r = await startSession(
          t.gw.url,
          token,
          { chargerId: 'CP-AC', connectorId: '1', driverEmail: DRIVERS.ada.email },
          100,
        );
        return r.status === 503 ? r : undefined;
      },
      5000,
      'offline',
    );
    expect(errorCode(res)).toBe('charger_offline');
    expect(balance(DRIVERS.ada.id)).toBe(before);
  });
});
