import { describe, expect, it } from 'vitest';
import { raw201, RAW_PROTOCOLS } from './helpers/raw-stations.js';
import { AMOUNT, cost, harness, hoursAgo, LIMIT_WH, sleep } from './helpers/session-harness.js';
import { waitUntil } from './helpers/wait.js';

/**
 * Chargers that misbehave the way real ones do, each case written once and run against OCPP 1.6J
 * and 2.0.1 (docs/ocpp.md "Misbehaving chargers" lists the outcomes). Every case ends with the same
 * check: one settlement, the driver charged no more than the energy the charger proved, and the
 * ledger invariants intact.
 */

describe.each(RAW_PROTOCOLS)('misbehaving chargers: $name', (protocol) => {
  const h = harness({});

  it('a start and an end repeated after a lost reply get the same answers; one start, one settlement', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx, frame, reply } = await station.start(10_000);
    expect(await station.send(frame)).toEqual(reply);
    await station.send(station.sample(tx, 10_600));
    const end = station.end(tx, 11_200);
    const first = await station.send(end);
    expect(await station.send(end)).toEqual(first);
    expect(h.chargingEvents(sessionId)).toBe(1);
    h.settledOnce(sessionId, 1_200);
  });

  it('a start sent again with a new timestamp after a lost reply is the same transaction, accepted; one settlement', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const sentAt = new Date(Date.now() - 5_000).toISOString();
    const { tx, reply } = await station.start(10_000, { timestamp: sentAt });
    // The retry is built anew, as such firmware does: stamped now (2.0.1: the next seqNo too).
    // The 1.6 reply carries the transactionId: the same reply is the same transaction.
    const again = await station.start(10_000, { transactionId: tx.ref });
    expect(again.reply).toEqual(reply);
    await station.send(station.sample(tx, 10_600));
    await station.send(station.end(tx, 10_900));
    expect(station.stops).toEqual([]);
    expect(h.chargingEvents(sessionId)).toBe(1);
    h.settledOnce(sessionId, 900);
  });

  it('a transaction replayed hours later, its end before its samples, settles once on the end register', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    // Queued while offline, delivered out of order: the end overtakes a sample taken before it.
    const late = station.sample(tx, 11_000, { timestamp: hoursAgo(2), offline: true });
    const end = station.end(tx, 12_000, {
      timestamp: hoursAgo(1),
      offline: true,
      reason: 'EVDisconnected',
    });
    await station.send(end);
    await station.send(late);
    await station.send(end);
    expect(h.session(sessionId).end_reason).toBe('EVDisconnected');
    h.settledOnce(sessionId, 2_000);
  });

  it('samples queued offline move the register but not the stop prediction; one past the paid energy stops at once', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    // Three samples hours old in one burst: taken as a live rate they would look like megawatts
    // and stop the session at once.
    for (const wh of [10_500, 11_000, 11_500])
      await station.send(station.sample(tx, wh, { timestamp: hoursAgo(3), offline: true }));
    await sleep(300);
    expect(station.stops).toEqual([]);
    expect(h.session(sessionId)).toMatchObject({ state: 'charging', last_meter_wh: 11_500 });
    // A queued sample past the paid energy: the charger must stop now.
    await station.send(station.sample(tx, 12_500, { timestamp: hoursAgo(2), offline: true }));
    await waitUntil(() => station.stops.length > 0, 5000, 'stop');
    await station.send(station.end(tx, 12_600, { reason: 'Remote' }));
    await h.settled(sessionId);
    // 2,600 Wh delivered against 2,424 paid: the overshoot is not charged.
    h.settledOnce(sessionId, 2_600);
    expect(h.session(sessionId)).toMatchObject({ cost: AMOUNT, credited: 0 });
  });

  it.each(['1970-01-01T00:00:00.000Z', '2099-01-01T00:00:00.000Z'])(
    'a charger clock at %s: samples still drive the stop prediction, and its timestamps move no money',
    async (clock) => {
      const { station, sessionId } = await h.paidSession(protocol);
      const { tx } = await station.start(10_000, { timestamp: clock });
      // Live samples spaced on the gateway's clock: the rate predicts the limit before it is hit.
      for (const wh of [10_800, 11_600]) {
        await sleep(100);
        await station.send(station.sample(tx, wh, { timestamp: clock }));
      }
      await waitUntil(() => station.stops.length > 0, 5000, 'predicted stop');
      expect(h.session(sessionId).state).toBe('stopping');
      await station.send(station.end(tx, 12_300, { timestamp: clock, reason: 'Remote' }));
      const s = await h.settled(sessionId);
      h.settledOnce(sessionId, 2_300);
      // Settled at the gateway's time, whatever the charger's clock says.
      expect(Math.abs(Date.parse(s.ended_at ?? '') - Date.now())).toBeLessThan(60_000);
    },
  );

  it.each([
    { id: '0', idTag: false },
    { id: '-1', idTag: true },
  ])(
    'transactionId $id (1.6: a charger that lost the start reply; 2.0.1: an id like any other) settles once',
    async ({ id, idTag }) => {
      const { station, sessionId } = await h.paidSession(protocol);
      const { tx } = await station.start(10_000, { transactionId: id });
      await station.send(station.sample(tx, 10_700));
      expect(h.session(sessionId).last_meter_wh).toBe(10_700);
      const end = station.end(tx, 11_100, { idTag });
      await station.send(end);
      await station.send(end);
      h.settledOnce(sessionId, 1_100);
    },
  );

  it.each(protocol.formats)(
    'meter values written as %s settle on the same energy',
    async (format) => {
      const { station, sessionId } = await h.paidSession(protocol);
      const { tx } = await station.start(10_000, { format });
      await station.send(station.sample(tx, 10_600, { format }));
      expect(h.session(sessionId).last_meter_wh).toBe(10_600);
      await station.send(station.end(tx, 11_250, { format }));
      h.settledOnce(sessionId, 1_250);
    },
  );

  it('a register going backwards is ignored; a stop register below the start settles on the last sample', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 10_500));
    await station.send(station.sample(tx, 10_100));
    expect(h.session(sessionId).last_meter_wh).toBe(10_500);
    await station.send(station.sample(tx, 10_800));
    await station.send(station.end(tx, 9_000));
    h.settledOnce(sessionId, 800);
  });

  it('a register that resets when the charger reboots mid-session is counted across the reset', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 10_600));
    await station.reboot();
    await station.send(station.sample(tx, 40));
    await station.send(station.sample(tx, 300));
    await station.send(station.end(tx, 450));
    // 600 Wh before the reboot, 410 Wh after it (counted from the first register after it).
    h.settledOnce(sessionId, 1_010);
  });

  it.each([
    { then: 'a sample', resumedWh: 10_900 as number | null },
    { then: 'the stop', resumedWh: null },
  ])(
    'a register that reads 0 while the charger boots and then resumes in $then is not counted twice',
    async ({ resumedWh }) => {
      const { station, sessionId } = await h.paidSession(protocol);
      const { tx } = await station.start(10_000);
      await station.send(station.sample(tx, 10_600));
      await station.reboot();
      await station.send(station.sample(tx, 0));
      if (resumedWh !== null) {
        await station.send(station.sample(tx, resumedWh));
        const row = h.t.gw.db
          .prepare('SELECT meter_carried_wh, last_meter_wh FROM sessions WHERE id = ?')
          .get(sessionId);
        expect(row).toEqual({ meter_carried_wh: 0, last_meter_wh: resumedWh });
      }
      await station.send(station.end(tx, 11_000));
      h.settledOnce(sessionId, 1_000);
    },
  );

  it('a held register sent again to a restarted gateway, without a reboot, does not confirm a reset', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 11_200));
    await station.reboot();
    const held = station.sample(tx, 10_900); // a glitch after the reboot, held as a possible reset
    await station.send(held);
    await h.t.restart();
    await station.reconnect(); // no BootNotification: the charger itself did not reboot again
    await station.send(held); // its reply was lost: the same reading again is not a second one
    await station.send(station.sample(tx, 11_350));
    await station.send(station.end(tx, 11_350));
    h.settledOnce(sessionId, 1_350);
  });

  it('a charger that loses its connection mid-session and comes back: the session goes on and settles once', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 10_500));
    await station.reconnect();
    await station.send(station.sample(tx, 11_000));
    await station.send(station.end(tx, 11_400));
    h.settledOnce(sessionId, 1_400);
  });

  it('a charger that reboots mid-session and ends the transaction on a reset register: settled on the last sample', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 10_500));
    await station.reconnect();
    await station.reboot();
    await station.send(station.end(tx, 30, { reason: 'PowerLoss' }));
    h.settledOnce(sessionId, 500);
  });

  it('a charger that never sends its stop but shows the connector Available: settled on the last register after the grace; a late stop changes nothing', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 10_700));
    await station.send(station.status(tx.connector, 'Available'));
    const s = await h.settled(sessionId);
    expect(s.end_reason).toBe('no_stop_connector_available');
    await station.send(station.end(tx, 10_900));
    h.settledOnce(sessionId, 700);
  });

  it('a transaction started before the cable is plugged in is not ended by its connector being Available', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000, { chargingState: 'Idle' });
    await station.send(station.status(tx.connector, 'Available'));
    await sleep(600); // twice the grace
    expect(h.session(sessionId).state).toBe('charging');
    await station.send(station.status(tx.connector, 'Charging'));
    await station.send(station.sample(tx, 10_400));
    await station.send(station.status(tx.connector, 'Available'));
    const s = await h.settled(sessionId);
    expect(s.end_reason).toBe('no_stop_connector_available');
    h.settledOnce(sessionId, 400);
  });

  it('a stop the charger refuses or leaves unanswered is sent again until it is accepted', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    station.stopReplies.push('Rejected', 'no answer', 'Rejected');
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 12_500)); // past the paid 2,424 Wh: stop now
    await waitUntil(() => station.stops.length === 4, 10_000, 'the fourth stop');
    expect(new Set(station.stops)).toEqual(new Set([station.stops[0]]));
    expect(h.session(sessionId).state).toBe('stopping');
    await station.send(station.end(tx, 12_550, { reason: 'Remote' }));
    h.settledOnce(sessionId, 2_550);
    expect(h.session(sessionId)).toMatchObject({ cost: AMOUNT, credited: 0 });
  });

  it('a stop refused just before the charger drops off reaches it when it comes back', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    station.stopReplies.push('Rejected');
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 12_450));
    await waitUntil(() => station.stops.length === 1, 5000, 'first stop');
    await station.reconnect();
    await waitUntil(() => station.stops.length >= 2, 5000, 'stop after reconnect');
    await station.send(station.end(tx, 12_460, { reason: 'Remote' }));
    h.settledOnce(sessionId, 2_460);
  });

  it('the paid energy itself is charged exactly', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    await station.send(station.end(tx, 10_000 + LIMIT_WH));
    h.settledOnce(sessionId, LIMIT_WH);
    expect(h.session(sessionId).cost).toBe(cost(LIMIT_WH));
  });
});

describe('a 2.0.1 charger that gives no start register', () => {
  const h = harness({});

  it.each([
    { end: 'without a register', noRegister: true, offline: false },
    { end: 'queued, with a register from before the reset', noRegister: false, offline: true },
  ])(
    'replays its queue after a live reading that followed a meter reset: queued readings do not count ($end)',
    async ({ noRegister, offline }) => {
      const { station, sessionId } = await h.paidSession(raw201);
      const { tx } = await station.start(0, { noRegister: true });
      await station.reconnect(); // offline for a while; the meter resets when it reboots
      await station.reboot();
      await station.send(station.sample(tx, 50)); // live, after the reset: taken as the start
      await station.send(station.sample(tx, 10_000, { offline: true, timestamp: hoursAgo(2) }));
      await station.send(station.sample(tx, 10_150, { offline: true, timestamp: hoursAgo(1.5) }));
      await station.send(station.sample(tx, 250));
      const timing = offline ? { offline, timestamp: hoursAgo(1) } : {};
      await station.send(station.end(tx, 10_200, { noRegister, ...timing }));
      // Proven since the start register: 50 → 250 Wh on live readings.
      h.settledOnce(sessionId, 200);
      expect(h.session(sessionId)).toMatchObject({ meter_start_sampled_at: expect.any(String) });
    },
  );
});

describe.each(RAW_PROTOCOLS)('a charger that goes silent: $name', (protocol) => {
  const h = harness({ settleAfterSilenceSeconds: 1 });

  it('a transaction unheard of for settleAfterSilenceSeconds is settled on its last register; a late stop changes nothing', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 10_900));
    const s = await h.settled(sessionId);
    expect(s.end_reason).toBe('no_stop_silence');
    await station.send(station.end(tx, 11_500));
    h.settledOnce(sessionId, 900);
  });
});
