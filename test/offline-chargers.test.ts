import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { IONIQ, PROTOCOLS, type SimulatedChargePoint } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

/**
 * Chargers keep charging while the gateway is unreachable and deliver what happened when it is
 * back, as real ones do: both simulators queue their transaction messages offline (1.6J:
 * StartTransaction, MeterValues, StopTransaction; 2.0.1: TransactionEvents marked offline).
 */
describe.each(PROTOCOLS)('a charger offline for a whole transaction: $name', (protocol) => {
  let t: TestGateway;
  let cp: SimulatedChargePoint | undefined;
  beforeEach(async () => {
    // A start timeout long enough for the charger's queue to arrive after the restart.
    t = await startTestGateway({
      sessions: { startTimeoutSeconds: 60, maxAmount: 1_000_000, stopLeadMilliseconds: 0 },
    });
  });
  afterEach(async () => {
    await cp?.disconnect();
    cp = undefined;
    await t.close();
  });

  interface Row {
    state: string;
    meter_start_wh: number;
    last_meter_wh: number;
    delivered_wh: number;
  }
  const session = (id: string) =>
    t.gw.db.prepare('SELECT * FROM sessions WHERE id = ?').get(id) as Row;

  it('a transaction started, metered and stopped while the gateway was down arrives in order and settles once', async () => {
    // A short call timeout: messages that are not queued (statuses) give up quickly offline.
    cp = await protocol.connect(t.gw.ocppUrl, 'CP-1', { timeFactor: 60, callTimeoutMs: 500 });
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const res = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      10_000,
    );
    expect(res.status).toBe(200); // accepted; the charger waits for the EV
    const { sessionId } = res.body as { sessionId: string };

    const disconnected = cp.waitFor('disconnected', () => true, 5000);
    await t.gw.close();
    await disconnected;
    // The driver plugs in while the charger cannot reach the gateway: it charges on its own.
    const started = cp.waitFor('transactionStarted', () => true, 10_000);
    await cp.plugIn(1, IONIQ);
    const tx = await started;
    let samples = 0;
    await cp.waitFor(
      'meterValues',
      (m) => m.transactionId === tx.transactionId && ++samples === 2,
      10_000,
    );
    const stopped = cp.waitFor('transactionStopped', () => true, 10_000);
    await cp.interrupt(1, 'Local');
    const stop = await stopped;

    const reconnected = cp.waitFor('reconnected', () => true, 15_000);
    await t.restart();
    await reconnected;
    const s = await waitUntil(
      () => (session(sessionId).state === 'settled' ? session(sessionId) : undefined),
      10_000,
      'settlement',
    );
    expect(s.meter_start_wh).toBe(tx.meterStart);
    // The samples taken offline arrived too (before the stop, or the register would not move).
    expect(s.last_meter_wh).toBeGreaterThan(tx.meterStart);
    expect(s.delivered_wh).toBe(stop.meterStop - tx.meterStart);
    const outcomes = t.gw.db
      .prepare(
        "SELECT kind FROM ledger_entries WHERE session_id = ? AND kind IN ('session_credit', 'session_refund')",
      )
      .all(sessionId);
    expect(outcomes).toEqual([{ kind: 'session_credit' }]);
    expect(verifyLedger(t.gw.db).ok).toBe(true);
  });
});
