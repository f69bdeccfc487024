import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { IdTokenStore } from '../src/id-tokens/id-token-store.js';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import {
  bootedCharger,
  IONIQ,
  PROTOCOLS,
  type SimulatedChargePoint,
} from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The simulators' card taps and AutoCharge against the gateway as it answers today: only the
 * one-time tokens of app sessions are accepted (a card bound to a driver pays once the tap path is
 * built: the todos below). What holds already: a card the gateway does not accept never starts a
 * charge and moves no money, whichever way the charger asks; a session's own token tapped at the
 * reader ends its transaction, settled once.
 */

const CARD = '04A23B1C';
const MAC = '00:23:A7:F1:C2:D4';

describe.each(PROTOCOLS)('simulated cards and vehicles at the gateway: $name', (protocol) => {
  let t: TestGateway;
  const chargers: SimulatedChargePoint[] = [];

  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterEach(async () => {
    await Promise.all(chargers.splice(0).map((c) => c.disconnect()));
  });
  afterAll(async () => {
    expect(verifyLedger(t.gw.db).checks.filter((c) => c.violations.length > 0)).toEqual([]);
    await t.close();
  });

  async function charger(personality: string[] = []): Promise<SimulatedChargePoint> {
    const cp = await bootedCharger(protocol, t.gw, 'CP-1', { personality });
    chargers.push(cp);
    return cp;
  }
  const count = (sql: string) => (t.gw.db.prepare(sql).get() as { n: number }).n;
  const money = () => ({
    sessions: count('SELECT COUNT(*) AS n FROM sessions'),
    entries: count('SELECT COUNT(*) AS n FROM ledger_entries'),
    balance: count(`SELECT balance AS n FROM wallets WHERE driver_id = '${DRIVERS.ada.id}'`),
  });

  it('an unknown card, a blocked bound card and an unbound vehicle are refused: nothing starts, no money moves', async () => {
    const store = new IdTokenStore(t.gw.db);
    const at = new Date().toISOString();
    const blocked = store.bind(
      {
        driverId: DRIVERS.ada.id,
        kind: 'card',
        type: 'ISO14443',
        value: '04:A2:3B:1C',
        source: 'operator',
      },
      at,
    );
    store.setBlocked(blocked.id, 'lost', at);
    const before = money();
    const cp = await charger();
    await cp.plugIn(1, IONIQ);
    for (const uid of ['DEADBEEF', CARD]) {
      const tap = await cp.tap(1, uid);
      expect(tap.outcome).toBe('refused');
      expect(tap.status).not.toBe('Accepted');
    }
    const identified = cp.waitFor('tapped', (e) => e.connectorId === 2);
    await cp.plugIn(2, { ...IONIQ, macAddress: MAC });
    expect(await identified).toMatchObject({ source: 'vehicle', outcome: 'refused' });
    expect(cp.state(1).transactionId).toBeUndefined();
    expect(cp.state(2).transactionId).toBeUndefined();
    expect(money()).toEqual(before);
  });

  it('skips-authorize: an unknown card goes straight to the start, which is refused; the charger ends it, no session', async () => {
    const before = money();
    const cp = await charger(['skips-authorize']);
    await cp.plugIn(1, IONIQ);
    const stopped = cp.waitFor('transactionStopped', (e) => e.connectorId === 1);
    expect(await cp.tap(1, 'DEADBEEF')).toMatchObject({ outcome: 'started' });
    expect((await stopped).reason).toBe('DeAuthorized');
    expect(cp.state(1).powerW).toBe(0);
    expect(money()).toEqual(before);
  });

  it("the session's own token tapped at the reader ends its transaction; the session settles once", async () => {
    const cp = await charger();
    await cp.plugIn(1, IONIQ);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const started = cp.waitFor('transactionStarted', (e) => e.connectorId === 1);
    const res = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      5_000,
    );
    expect(res.status).toBe(200);
    const { sessionId } = res.body as { sessionId: string };
    const { idTag } = await started;
    const stopped = cp.waitFor('transactionStopped', (e) => e.connectorId === 1);
    // 2.0.1: the token the gateway sent is of type Central; the reader must present that one.
    expect(await cp.tap(1, idTag, { type: 'Central' })).toMatchObject({ outcome: 'stopped' });
    expect((await stopped).reason).toBe('Local');
    const settled = await waitUntil(
      () =>
        t.gw.db
          .prepare("SELECT state FROM sessions WHERE id = ? AND state = 'settled'")
          .get(sessionId),
      5000,
      'settlement',
    );
    expect(settled).toEqual({ state: 'settled' });
    // Stopped early: one debit, the shortfall credited once.
    const kinds = t.gw.db
      .prepare('SELECT kind FROM ledger_entries WHERE session_id = ? ORDER BY seq')
      .all(sessionId);
    expect(kinds).toEqual([{ kind: 'session_debit' }, { kind: 'session_credit' }]);
  });

  // Once a card bound to a driver pays at the charger (the tap path in src/charging):
  it.todo(
    "a bound card tapped opens a paid session from its driver's wallet (each TxStartPoint order)",
  );
  it.todo(
    'a bound card read lower-case, separated, zero-padded or padded to its buffer is the same card',
  );
  it.todo(
    'a blocked card is answered Blocked, an expired one Expired, a wallet below the tap minimum NoCredit (2.0.1) / Invalid (1.6)',
  );
  it.todo(
    'a vehicle bound by its MAC (1.6 VID:, 2.0.1 MacAddress) is identified at plug-in and pays',
  );
  it.todo(
    "skips-authorize: a bound card's StartTransaction / Started event alone opens the paid session",
  );
  it.todo(
    'the card that started a paid session tapped again stops it; the shortfall is credited once',
  );
});
