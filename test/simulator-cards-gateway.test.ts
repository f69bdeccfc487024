import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { ChargePoint201 } from '../simulators/ocpp201/charge-point.js';
import type { FrameEvent } from '../simulators/shared/events.js';
import { offlineDebitReference } from '../src/charging/taps.js';
import { IdTokenStore } from '../src/id-tokens/id-token-store.js';
import { costDown } from '../src/pricing/money.js';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import {
  bootedCharger,
  IONIQ,
  PROTOCOLS,
  type SimulatedChargePoint,
} from './helpers/simulated-charger.js';
import { adjustWallet, bindCard } from './helpers/local-lists.js';
import { TcpLink } from './helpers/tcp-link.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The simulators' card taps and AutoCharge against the real gateway: a card or vehicle bound to a
 * driver opens a session paid from the wallet by the tap policy (docs/driver-tokens.md), in every
 * TxStartPoint order and whatever way the reader writes the UID, and is settled once; a card the
 * gateway does not accept never starts a charge and moves no money, whichever way the charger asks;
 * the token that started a session tapped at the reader ends its transaction.
 */

const CARD = '04A23B1C';
const MAC = '00:23:A7:F1:C2:D4';
/** Bound to Ada: each tap debits the policy's fixed amount, which is also the tap minimum. */
const PAID = '0584350940C1D2';
const EXPIRED = '04E0E0E0E0';
/** Bound to Bola, whose wallet is brought below the tap minimum. */
const POOR = '04B0B0B0B0';
const PAYING_MAC = '00:23:A7:F1:C2:D5';
const AMOUNT = 1_000;

describe.each(PROTOCOLS)('simulated cards and vehicles at the gateway: $name', (protocol) => {
  let t: TestGateway;
  const chargers: SimulatedChargePoint[] = [];

  beforeAll(async () => {
    t = await startTestGateway({ taps: { default: { amount: AMOUNT, minimum: AMOUNT } } });
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

  let paidCard = '';
  beforeAll(() => {
    paidCard = bindCard(t.gw.db, DRIVERS.ada.id, PAID).id;
  });

  interface Row {
    id: string;
    state: string;
    amount: number;
    cost: number | null;
    credited: number | null;
    origin: string;
    id_token_id: string | null;
    end_reason: string | null;
  }
  const sessionOf = (tokenId: string): Row | undefined =>
    t.gw.db
      .prepare(
        `SELECT id, state, amount, cost, credited, origin, id_token_id, end_reason
           FROM sessions WHERE id_token_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`,
      )
      .get(tokenId) as Row | undefined;
  const openOf = (tokenId: string) =>
    waitUntil(
      () => {
        const s = sessionOf(tokenId);
        return s && s.state === 'charging' ? s : undefined;
      },
      5000,
      'the paid session',
    );
  /** Settled once: the tap's debit, then its shortfall credited (0 when it used it all). */
  async function settledOnce(id: string, endReason?: string): Promise<void> {
    const s = await waitUntil(
      () =>
        t.gw.db.prepare("SELECT * FROM sessions WHERE id = ? AND state = 'settled'").get(id) as
          (Row & { delivered_wh: number }) | undefined,
      10_000,
      'settlement',
    );
    if (endReason) expect(s.end_reason).toBe(endReason);
    expect(s.cost).toBeLessThanOrEqual(s.amount);
    const entries = t.gw.db
      .prepare('SELECT kind, amount FROM ledger_entries WHERE session_id = ? ORDER BY seq')
      .all(id) as { kind: string; amount: number }[];
    const shortfall = s.amount - (s.cost ?? 0);
    expect(entries).toEqual([
      { kind: 'session_debit', amount: -s.amount },
      { kind: 'session_credit', amount: shortfall },
    ]);
  }

  /** Taps the paid card again: the charger ends the transaction (Local), the session settles. */
  async function tapToStop(cp: SimulatedChargePoint, uid: string, sessionId: string) {
    const stopped = cp.waitFor('transactionStopped', (e) => e.connectorId === 1);
    expect(await cp.tap(1, uid)).toMatchObject({ outcome: 'stopped' });
    expect((await stopped).reason).toBe('Local');
    await settledOnce(sessionId);
  }

  const orders =
    protocol.name === 'OCPP 1.6J'
      ? (['tap, then plug in', 'plug in, then tap'] as const)
      : (['Authorized', 'PowerPathClosed', 'EVConnected'] as const);

  it.each(orders)(
    "a bound card opens a session paid from its driver's wallet (%s), stopped at its paid energy or by the card tapped again",
    async (order) => {
      const cp = await charger();
      if (cp instanceof ChargePoint201)
        cp.deviceModel.setInternal('TxCtrlr', 'TxStartPoint', order);
      const balance = money().balance;
      if (order === 'plug in, then tap' || order === 'EVConnected') await cp.plugIn(1, IONIQ);
      const first = await cp.tap(1, PAID);
      expect(first).toMatchObject({ status: 'Accepted' });
      if (!cp.state(1).plugged) await cp.plugIn(1, IONIQ);
      const s = await openOf(paidCard);
      expect(s).toMatchObject({ origin: 'card', amount: AMOUNT });
      expect(money().balance).toBe(balance - AMOUNT);
      // Half the orders run to the paid energy (the gateway stops them), half are tapped off.
      if (order === 'plug in, then tap' || order === 'PowerPathClosed') {
        await tapToStop(cp, PAID, s.id);
      } else {
        await settledOnce(s.id);
        const asked = t.gw.db
          .prepare('SELECT origin FROM session_stop_requests WHERE session_id = ?')
          .get(s.id);
        expect(asked).toEqual({ origin: 'paid_energy' });
      }
      const settled = sessionOf(paidCard) as Row;
      expect(money().balance).toBe(balance - (settled.cost ?? 0));
    },
  );

  it.each([['lowercase-uids'], ['uid-separators=-'], ['uid-leading-zeros'], ['padded-tokens']])(
    'the bound card read by a reader with %s is the same card: accepted, paid, stopped by itself',
    async (personality) => {
      const cp = await charger([personality]);
      await cp.plugIn(1, IONIQ);
      const sent: string[] = [];
      cp.on('frame', ({ direction, message }: FrameEvent) => {
        const frame = JSON.parse(message) as unknown[];
        if (direction !== 'out' || frame[0] !== 2 || frame[2] !== 'Authorize') return;
        const params = frame[3] as { idTag?: string; idToken?: { idToken: string } };
        sent.push(params.idTag ?? params.idToken?.idToken ?? '');
      });
      const tap = await cp.tap(1, PAID);
      expect(tap).toMatchObject({ status: 'Accepted', outcome: 'started' });
      // The reader wrote the UID its own way, not as it is bound.
      expect(sent).toHaveLength(1);
      expect(sent[0]).not.toBe(PAID);
      const s = await openOf(paidCard);
      await tapToStop(cp, PAID, s.id);
    },
  );

  it('a blocked card is answered Blocked, an expired one Expired, a wallet below the tap minimum NoCredit (2.0.1) / Invalid (1.6): nothing starts', async () => {
    bindCard(t.gw.db, DRIVERS.ada.id, EXPIRED, { expiresAt: '2020-01-01T00:00:00.000Z' });
    bindCard(t.gw.db, DRIVERS.bola.id, POOR);
    adjustWallet(t.gw.db, DRIVERS.bola.id, -(DRIVERS.bola.balance - AMOUNT + 1));
    const before = money();
    const cp = await charger();
    await cp.plugIn(1, IONIQ);
    const noCredit = protocol.name === 'OCPP 1.6J' ? 'Invalid' : 'NoCredit';
    for (const [uid, status] of [
      [CARD, 'Blocked'],
      [EXPIRED, 'Expired'],
      [POOR, noCredit],
    ] as const) {
      expect(await cp.tap(1, uid)).toMatchObject({ status, outcome: 'refused' });
    }
    expect(cp.state(1).transactionId).toBeUndefined();
    expect(money()).toEqual(before);
  });

  it('a vehicle bound by its MAC (1.6 VID:, 2.0.1 MacAddress) is identified at plug-in and pays', async () => {
    const vehicle = new IdTokenStore(t.gw.db).bind(
      {
        driverId: DRIVERS.ada.id,
        kind: 'vehicle',
        type: 'MacAddress',
        value: PAYING_MAC,
        source: 'operator',
      },
      new Date().toISOString(),
    );
    const cp = await charger();
    const identified = cp.waitFor('tapped', (e) => e.connectorId === 1);
    await cp.plugIn(1, { ...IONIQ, macAddress: PAYING_MAC });
    expect(await identified).toMatchObject({ source: 'vehicle', status: 'Accepted' });
    const s = await openOf(vehicle.id);
    expect(s).toMatchObject({ origin: 'vehicle', amount: AMOUNT });
    await settledOnce(s.id);
  });

  it("skips-authorize: a bound card's StartTransaction / Started event alone opens the paid session", async () => {
    const cp = await charger(['skips-authorize']);
    await cp.plugIn(1, IONIQ);
    const frames: string[] = [];
    cp.on('frame', ({ direction, message }: FrameEvent) => {
      const frame = JSON.parse(message) as unknown[];
      if (direction === 'out' && frame[0] === 2) frames.push(String(frame[2]));
    });
    expect(await cp.tap(1, PAID)).toMatchObject({ outcome: 'started' });
    const s = await openOf(paidCard);
    expect(s).toMatchObject({ origin: 'card', amount: AMOUNT });
    expect(frames).not.toContain('Authorize');
    await tapToStop(cp, PAID, s.id);
  });
});

/**
 * A card tapped while the link is down (docs/money.md "Offline starts"): the charger starts from
 * the local list the gateway sent, reports the start when the link is back, and the gateway bills
 * it from the wallet: the tap's debit, then a further debit for the energy beyond it.
 */
describe.each(PROTOCOLS)('a card tapped offline at the gateway: $name', (protocol) => {
  const LISTED = '04A1B2C3D4';
  const BLOCKED = '04BADBAD00';
  let t: TestGateway;
  let cp: SimulatedChargePoint | undefined;
  let link: TcpLink | undefined;

  beforeAll(async () => {
    t = await startTestGateway({
      taps: { default: { amount: AMOUNT, minimum: AMOUNT, offline: { minBalance: 0 } } },
      localLists: { offlineStarts: true, pollSeconds: 0.1, retrySeconds: 0.2 },
    });
    bindCard(t.gw.db, DRIVERS.ada.id, LISTED);
    const blocked = bindCard(t.gw.db, DRIVERS.ada.id, BLOCKED);
    new IdTokenStore(t.gw.db).setBlocked(blocked.id, 'lost', new Date().toISOString());
  });
  afterAll(async () => {
    await cp?.disconnect();
    await link?.cut();
    expect(verifyLedger(t.gw.db).checks.filter((c) => c.violations.length > 0)).toEqual([]);
    await t.close();
  });

  it('starts from the list while offline (a card the list does not accept is refused); back online, the late start is billed from the wallet', async () => {
    link = await TcpLink.open(t.gw.port);
    const url = t.gw.ocppUrl.replace(`:${t.gw.port}/`, `:${link.port}/`);
    const charger = await bootedCharger(protocol, { ocppUrl: url, db: t.gw.db }, 'CP-1');
    cp = charger;
    await waitUntil(
      () => charger.localList.entry(LISTED)?.status === 'Accepted',
      10_000,
      'the card listed',
    );
    expect(charger.localList.entry(BLOCKED)?.status).toBe('Blocked');
    await charger.plugIn(1, IONIQ);
    await charger.plugIn(2, IONIQ);
    await link.cut();
    await waitUntil(() => !t.gw.chargers.isOnline('CP-1'), 5000, 'the gateway sees it offline');
    const balance = (
      t.gw.db.prepare('SELECT balance FROM wallets WHERE driver_id = ?').get(DRIVERS.ada.id) as {
        balance: number;
      }
    ).balance;

    expect(await charger.tap(2, BLOCKED)).toMatchObject({ status: 'Blocked', outcome: 'refused' });
    expect(await charger.tap(2, 'DEADBEEF')).toMatchObject({ outcome: 'refused' });
    expect(charger.state(2).transactionId).toBeUndefined();
    const tappedAt = Date.now();
    expect(await charger.tap(1, LISTED)).toMatchObject({ status: 'Accepted', outcome: 'started' });
    // Offline, nothing stops it at the paid energy: it delivers beyond what the tap will debit.
    // A short outage (a 1.6 start reported this soon is not late by its stamp alone).
    const paidWh = Math.floor((AMOUNT * 1000) / 412.5);
    await waitUntil(
      () => charger.state(1).deliveredWh > paidWh * 1.5 && Date.now() - tappedAt > 2_500,
      10_000,
      'energy beyond',
    );

    await link.restore();
    // Reported late: the session opens started offline, past its paid energy, and is stopped.
    const s = await waitUntil(
      () =>
        t.gw.db
          .prepare(
            `SELECT * FROM sessions WHERE origin = 'card' AND state = 'settled' AND charger_id = 'CP-1'`,
          )
          .get() as
          | {
              id: string;
              amount: number;
              started_offline: number;
              delivered_wh: number;
              price_micro_ngn_per_wh: number;
            }
          | undefined,
      20_000,
      'the late start settled',
    );
    expect(s).toMatchObject({ amount: AMOUNT, started_offline: 1 });
    const due = costDown(s.delivered_wh, s.price_micro_ngn_per_wh);
    expect(due).toBeGreaterThan(AMOUNT);
    const entries = t.gw.db
      .prepare(
        `SELECT kind, amount, reference FROM ledger_entries
          WHERE driver_id = ? AND (session_id = ? OR reference = ?) ORDER BY seq`,
      )
      .all(DRIVERS.ada.id, s.id, offlineDebitReference(s.id));
    expect(entries).toEqual([
      expect.objectContaining({ kind: 'session_debit', amount: -AMOUNT }),
      expect.objectContaining({ kind: 'session_credit', amount: 0 }),
      { kind: 'adjustment', amount: -(due - AMOUNT), reference: offlineDebitReference(s.id) },
    ]);
    const after = t.gw.db
      .prepare('SELECT balance FROM wallets WHERE driver_id = ?')
      .get(DRIVERS.ada.id);
    expect(after).toEqual({ balance: balance - due });
    expect(charger.state(2).transactionId).toBeUndefined();
  });
});
