import { describe, expect, it } from 'vitest';
import { maskToken } from '../src/id-tokens/token-key.js';
import { API_KEY, DRIVERS } from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import { raw201, RAW_PROTOCOLS, type Frame } from './helpers/raw-stations.js';
import { chargeUntilStopped, hoursAgo } from './helpers/session-harness.js';
import { CARDS, costOf, TAP, TAP_WH, tapSite } from './helpers/tap-site.js';
import { waitUntil } from './helpers/wait.js';

/**
 * A tap pays from the wallet (docs/driver-tokens.md "A tap pays", docs/money.md): bound cards and
 * vehicles presented at raw-frame chargers of both protocols, on real sockets and a real SQLite
 * file (the site: helpers/tap-site.ts).
 */

const site = tapSite();
const { h, bindAll, balance, setBalance, tapSessions, debits, ledgerClean, authorize, tap } = site;
const { booted, endAndSettle } = site;

describe.each(RAW_PROTOCOLS)('a tap pays from the wallet: $name', (protocol) => {
  const v201 = protocol === raw201;

  it('answers Authorize for every kind of token, and debits nothing', async () => {
    bindAll();
    const station = await booted(protocol);
    const before = h.t.gw.db.prepare('SELECT count(*) AS n FROM ledger_entries').get();
    const cases: [string, string, string][] = [
      // token presented, 1.6, 2.0.1
      ['04a23b1c5d6e70', 'Accepted', 'Accepted'],
      ['VID:0a1b2c3d4e5f', 'Accepted', 'Accepted'],
      ['0A-1B-2C-3D-4E-5F', 'Accepted', 'Accepted'],
      ['NOBODY-CARD', 'Invalid', 'Unknown'],
      ['BLOCKED-CARD', 'Blocked', 'Blocked'],
      ['expired-card', 'Expired', 'Expired'],
      ['GONE-CARD', 'Invalid', 'Invalid'],
      ['OTHER-CARD-1', 'Invalid', 'NoCredit'],
    ];
    for (const [token, s16, s201] of cases)
      expect([token, await authorize(protocol, station, token)]).toEqual([
        token,
        v201 ? s201 : s16,
      ]);
    expect(h.t.gw.db.prepare('SELECT count(*) AS n FROM ledger_entries').get()).toEqual(before);
  });

  it('opens a paid card session at the start, answers a repeat without a second debit, stops at the paid energy and settles once', async () => {
    bindAll();
    const station = await booted(protocol);
    const start = balance(DRIVERS.ada.id);
    expect(await authorize(protocol, station, '04-A2-3B-1C-5D-6E-70')).toBe('Accepted');
    // Padded to the field's 20 characters, lower case: one key for the card.
    const { tx, frame, status } = await tap(station, ' 04a23b1c5d6e70     ', 1);
    expect(status).toBe('Accepted');
    const [s] = tapSessions().filter((r) => r.state === 'charging');
    expect(s).toMatchObject({
      origin: 'card',
      amount: TAP,
      driver_id: DRIVERS.ada.id,
      started_offline: 0,
    });
    expect(balance(DRIVERS.ada.id)).toBe(start - TAP);
    // The same StartTransaction / Started event again: the same answer, one debit.
    const again = (await station.send(frame)) as { transactionId?: number };
    if (!v201) expect(String(again.transactionId)).toBe(tx.ref);
    expect(debits(s!.id)).toBe(1);
    const stoppedAt = await chargeUntilStopped(station, tx, 10_000, 10_000 + 3 * TAP_WH);
    expect(station.stops).toEqual([tx.ref]);
    const settled = await endAndSettle(station, tx, stoppedAt, s!.id);
    const cost = Math.min(TAP, costOf(stoppedAt - 10_000));
    expect(settled).toMatchObject({ cost, credited: TAP - cost });
    expect(balance(DRIVERS.ada.id)).toBe(start - cost);
    // The uplink hears how it started, the token masked.
    const events = (
      h.t.gw.db.prepare("SELECT payload FROM outbox WHERE topic = 'sessions'").all() as {
        payload: string;
      }[]
    )
      .map((r) => JSON.parse(r.payload) as Record<string, unknown>)
      .filter((e) => e.sessionId === s!.id);
    expect(events.map((e) => e.state)).toEqual(['charging', 'stopping', 'settled']);
    expect(events.every((e) => e.origin === 'card')).toBe(true);
    expect(events[0]).toMatchObject({
      token: maskToken('4A23B1C5D6E70'),
      offline: false,
      limitWh: TAP_WH,
    });
    expect(JSON.stringify(events)).not.toContain('4A23B1C5D6E70');
    // The operator's views say so too: the session's page and the list.
    const viewer = createOperator(h.t.gw.db, `vera-${protocol.name}`, 'viewer');
    const one = await op(h.t.gw.operatorUrl, viewer, 'GET', `/sessions/${s!.id}`);
    expect((one.body as { session: unknown }).session).toMatchObject({
      origin: 'card',
      token: maskToken('4A23B1C5D6E70'),
      startedOffline: false,
    });
    const list = await op(h.t.gw.operatorUrl, viewer, 'GET', '/sessions?limit=200');
    const rows = (list.body as { items: { sessionId: string; origin: string }[] }).items;
    expect(rows.find((r) => r.sessionId === s!.id)?.origin).toBe('card');
    ledgerClean();
  });

  it('refuses a start the wallet cannot pay before any energy: no debit, and the transaction is stopped', async () => {
    bindAll();
    const station = await booted(protocol);
    const before = tapSessions().length;
    const { tx, status } = await tap(station, 'OTHER-CARD-1', 2);
    expect(status).toBe(v201 ? 'NoCredit' : 'Invalid');
    expect(tapSessions().length).toBe(before);
    await waitUntil(() => station.stops.includes(tx.ref) || undefined, 3000, 'refused stop');
    await station.send(station.end(tx, 10_000));
    ledgerClean();
  });

  it('one card at two connectors at once: one session, the other ConcurrentTx', async () => {
    bindAll();
    const station = await booted(protocol);
    const start = balance(DRIVERS.ada.id);
    const both = await Promise.all([
      tap(station, '04A23B1C5D6E70', 1),
      tap(station, '04a23b1c5d6e70', 2),
    ]);
    expect(both.map((b) => b.status).sort()).toEqual(['Accepted', 'ConcurrentTx']);
    const open = tapSessions().filter((r) => r.state === 'charging');
    expect(open).toHaveLength(1);
    expect(balance(DRIVERS.ada.id)).toBe(start - TAP);
    const won = both.find((b) => b.status === 'Accepted')!;
    const lost = both.find((b) => b.status !== 'Accepted')!;
    await station.send(station.end(lost.tx, 10_000));
    await endAndSettle(station, won.tx, 11_000, open[0]!.id);
    expect(balance(DRIVERS.ada.id)).toBe(start - costOf(1_000));
    ledgerClean();
  });

  it('a tap while the same driver’s app session runs elsewhere: both run, each paid', async () => {
    bindAll();
    const ac = await booted(protocol, 'CP-AC');
    const start = balance(DRIVERS.ada.id);
    const token = await mintToken(h.t.gw.url, API_KEY, DRIVERS.ada.email);
    const app = await startSession(
      h.t.gw.url,
      token,
      { chargerId: 'CP-AC', connectorId: '1', driverEmail: DRIVERS.ada.email },
      1_000,
    );
    expect(app.status).toBe(200);
    const appTx = (await ac.start(20_000)).tx;
    const station = await booted(protocol);
    const { tx, status } = await tap(station, 'VID:0A1B2C3D4E5F', 1);
    expect(status).toBe('Accepted');
    const [s] = tapSessions().filter((r) => r.state === 'charging');
    expect(s).toMatchObject({ origin: 'vehicle' });
    expect(balance(DRIVERS.ada.id)).toBe(start - 1_000 - TAP);
    await endAndSettle(station, tx, 10_500, s!.id);
    await ac.send(ac.end(appTx, 20_400));
    const appId = (app.body as { sessionId: string }).sessionId;
    await h.settled(appId);
    // CP-AC's tariff: 250 NGN/kWh.
    expect(balance(DRIVERS.ada.id)).toBe(start - costOf(500) - Math.floor(400 / 4));
    ledgerClean();
  });

  it('a top-up racing a tap: both applied, in either order, and no money made or lost', async () => {
    bindAll();
    const station = await booted(protocol);
    setBalance(DRIVERS.bola.id, 1_000); // below the minimum: the tap depends on the top-up's order
    const wallet = site.wallet();
    const topUp = new Promise<void>((resolve) =>
      setImmediate(() => {
        wallet.credit(
          DRIVERS.bola.id,
          'top_up',
          5_000,
          `race-${protocol.name}`,
          new Date().toISOString(),
        );
        resolve();
      }),
    );
    const [{ tx, status }] = await Promise.all([tap(station, 'BOLA-CARD-1', 1), topUp]);
    const charged = status === 'Accepted' ? TAP : 0;
    expect(balance(DRIVERS.bola.id)).toBe(6_000 - charged);
    if (status === 'Accepted') {
      const [s] = tapSessions().filter((r) => r.state === 'charging');
      await endAndSettle(station, tx, 10_000, s!.id);
      expect(balance(DRIVERS.bola.id)).toBe(6_000);
    } else {
      expect(status).toBe(v201 ? 'NoCredit' : 'Invalid');
      await station.send(station.end(tx, 10_000));
    }
    ledgerClean();
  });

  it('an Authorize flood debits nothing and writes nothing', async () => {
    bindAll();
    const station = await booted(protocol);
    const count = () =>
      h.t.gw.db
        .prepare(
          'SELECT (SELECT count(*) FROM ledger_entries) AS l, (SELECT count(*) FROM outbox) AS o, (SELECT count(*) FROM sessions) AS s',
        )
        .get();
    const before = count();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        authorize(protocol, station, i % 2 ? '04a23b1c5d6e70' : `FLOOD-${i}`),
      ),
    );
    expect(new Set(answers)).toEqual(new Set(['Accepted', v201 ? 'Unknown' : 'Invalid']));
    expect(count()).toEqual(before);
  });

  it('a card rebound while its session runs: the session stays paid by its wallet, the next tap is the new driver’s', async () => {
    const store = bindAll();
    const station = await booted(protocol);
    setBalance(DRIVERS.bola.id, 3_000);
    const adaStart = balance(DRIVERS.ada.id);
    const { tx } = await tap(station, '04A23B1C5D6E70', 1);
    const [s] = tapSessions().filter((r) => r.state === 'charging');
    const at = new Date().toISOString();
    h.t.gw.db.transaction(() => {
      store.unbind(store.find('04A23B1C5D6E70')!.id, at);
      store.bind({ ...CARDS.ada, driverId: DRIVERS.bola.id, source: 'cloud' }, at);
    })();
    await endAndSettle(station, tx, 10_800, s!.id);
    expect(balance(DRIVERS.ada.id)).toBe(adaStart - costOf(800));
    expect(balance(DRIVERS.bola.id)).toBe(3_000);
    const next = await tap(station, '04A23B1C5D6E70', 2);
    expect(next.status).toBe('Accepted');
    const open = tapSessions().filter((r) => r.state === 'charging');
    expect(open.map((r) => r.driver_id)).toEqual([DRIVERS.bola.id]);
    await endAndSettle(station, next.tx, 10_000, open[0]!.id);
    // Back to ada for the other cases.
    h.t.gw.db.transaction(() => {
      store.unbind(store.find('04A23B1C5D6E70')!.id, at);
      store.bind({ ...CARDS.ada, source: 'operator' }, at);
    })();
    ledgerClean();
  });

  it('an offline start reported late is billed for what was delivered, up to the balance; the rest is the operator’s loss', async () => {
    bindAll();
    const station = await booted(protocol);
    setBalance(DRIVERS.bola.id, 3_000);
    const stamp = { timestamp: hoursAgo(2), offline: true };
    const { tx, status } = await tap(station, 'BOLA-CARD-1', 2, 10_000, stamp);
    expect(status).toBe('Accepted');
    const [s] = tapSessions().filter((r) => r.state === 'charging');
    expect(s).toMatchObject({ started_offline: 1, amount: TAP });
    // 12,000 Wh cost 4,950 NGN: 2,000 debited at the report, 1,000 more at settlement (all left).
    await station.send(station.end(tx, 22_000, { timestamp: hoursAgo(1), offline: true }));
    const settled = await h.settled(s!.id);
    expect(settled).toMatchObject({ cost: TAP, credited: 0, delivered_wh: 12_000 });
    expect(balance(DRIVERS.bola.id)).toBe(0);
    const extra = h.t.gw.db
      .prepare('SELECT kind, amount FROM ledger_entries WHERE reference = ?')
      .all(`offline-start:${s!.id}`);
    expect(extra).toEqual([{ kind: 'adjustment', amount: -1_000 }]);
    const losses = h.t.gw.db
      .prepare('SELECT reason, wh FROM operator_losses WHERE session_id = ?')
      .all(s!.id);
    // 3,000 NGN pay 7,272 Wh of the 12,000.
    expect(losses).toEqual([{ reason: 'offline_unpaid', wh: 12_000 - 7_272 }]);
    ledgerClean();
  });

  it('an offline start on an empty wallet is refused and raised for the operator, nothing debited', async () => {
    bindAll();
    const station = await booted(protocol);
    setBalance(DRIVERS.bola.id, 0);
    const { tx, status } = await tap(station, 'BOLA-CARD-1', 2, 10_000, {
      timestamp: hoursAgo(2),
      offline: true,
    });
    expect(status).toBe(v201 ? 'NoCredit' : 'Invalid');
    const alert = h.t.gw.db
      .prepare("SELECT detail FROM alerts WHERE kind = 'operator_loss' AND subject = ?")
      .get(`CP-1/${tx.ref}`) as { detail: string } | undefined;
    expect(JSON.parse(alert!.detail)).toMatchObject({
      reason: 'offline_empty_wallet',
      token: maskToken('BOLA-CARD-1'),
    });
    await station.send(station.end(tx, 10_500, { timestamp: hoursAgo(1), offline: true }));
    ledgerClean();
  });
});

describe('2.0.1 TxStartPoint orders', () => {
  it('Started without a token, then Updated with it: the session opens at the event that names it', async () => {
    bindAll();
    const station = await booted(raw201);
    const start = balance(DRIVERS.ada.id);
    const ref = 'tx-evconnected-1';
    const frame = (eventType: string, seqNo: number, extra: Record<string, unknown>): Frame => ({
      action: 'TransactionEvent',
      params: {
        eventType,
        timestamp: new Date().toISOString(),
        triggerReason: eventType === 'Started' ? 'CablePluggedIn' : 'Authorized',
        seqNo,
        transactionInfo: { transactionId: ref, chargingState: 'EVConnected' },
        evse: { id: 1, connectorId: 1 },
        ...extra,
      },
    });
    await station.send(
      frame('Started', 0, {
        meterValue: [
          {
            timestamp: new Date().toISOString(),
            sampledValue: [
              {
                value: 10_000,
                context: 'Transaction.Begin',
                measurand: 'Energy.Active.Import.Register',
              },
            ],
          },
        ],
      }),
    );
    expect(tapSessions().filter((r) => r.state === 'charging')).toHaveLength(0);
    const updated = (await station.send(
      frame('Updated', 1, { idToken: { idToken: '04A23B1C5D6E70', type: 'ISO14443' } }),
    )) as { idTokenInfo: { status: string } };
    expect(updated.idTokenInfo.status).toBe('Accepted');
    const [s] = tapSessions().filter((r) => r.state === 'charging');
    expect(s).toMatchObject({ origin: 'card', amount: TAP });
    expect(balance(DRIVERS.ada.id)).toBe(start - TAP);
    await endAndSettle(station, { ref, connector: 1, idToken: '04A23B1C5D6E70' }, 10_400, s!.id);
    ledgerClean();
  });
});
