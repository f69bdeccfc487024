import { describe, expect, it } from 'vitest';
import { API_KEY, DRIVERS, testChargers } from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import {
  raw16,
  raw201,
  RAW_PROTOCOLS,
  type RawStation,
  type StationTx,
} from './helpers/raw-stations.js';
import { AMOUNT, harness, LIMIT_WH, sleep } from './helpers/session-harness.js';
import { waitUntil } from './helpers/wait.js';

/**
 * Real chargers in the field (docs/field-compatibility.md, the session rows): what they send is
 * taken, the stop is never lost, and only proven energy is billed. Every case runs against OCPP
 * 1.6J and 2.0.1 raw frames over a real socket; each names the failure it guards against.
 */

const at = (msFromNow: number) => new Date(Date.now() + msFromNow).toISOString();

/** A charger that keeps charging: a rising register every `everyMs` until `done`; the last one. */
async function keepCharging(
  station: RawStation,
  tx: StationTx,
  o: { fromWh: number; stepWh: number; everyMs: number; timeoutMs: number },
  done: () => boolean,
): Promise<number> {
  let register = o.fromWh;
  await waitUntil(
    async () => {
      if (done()) return true;
      register += o.stepWh;
      await station.send(station.sample(tx, register));
      await sleep(o.everyMs);
      return false;
    },
    o.timeoutMs,
    'the next stop step',
  );
  return register;
}

describe.each(RAW_PROTOCOLS)('field sessions: $name', (protocol) => {
  const h = harness({});

  it('a burst of samples queued over a minute and sent at once is a rate over that minute, not a stop at half the paid energy', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    // The charger was cut off for a minute: its start and four samples (150 Wh each 15 s, 36 kW)
    // arrive within milliseconds. On the receive clock that is megawatts and an immediate stop.
    const { tx } = await station.start(10_000, { timestamp: at(-60_000) });
    for (let k = 1; k <= 4; k++)
      await station.send(
        station.sample(tx, 10_000 + 150 * k, { timestamp: at(-60_000 + 15_000 * k) }),
      );
    await sleep(300);
    expect(station.stops).toEqual([]);
    expect(h.session(sessionId)).toMatchObject({ state: 'charging', last_meter_wh: 10_600 });
    await station.send(station.end(tx, 10_700, { reason: 'EVDisconnected' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, 700);
  });

  it('a charger clock hours behind still gets its stop predicted before the paid energy', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const skew = -3 * 3_600_000;
    const { tx } = await station.start(10_000, { timestamp: at(skew) });
    // Live samples 100 ms apart on the charger's (late) clock: 800 Wh each, 2,424 Wh paid, so the
    // limit is due a little after the second; nothing more is sent, the prediction must fire.
    for (const wh of [10_800, 11_600]) {
      await sleep(100);
      await station.send(station.sample(tx, wh, { timestamp: at(skew) }));
    }
    await waitUntil(() => station.stops.length > 0, 5000, 'predicted stop');
    expect(h.session(sessionId).state).toBe('stopping');
    await station.send(station.end(tx, 12_300, { timestamp: at(skew), reason: 'Remote' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, 2_300);
  });
});

describe.each(RAW_PROTOCOLS)('field sessions, a 22 kW connector: $name', (protocol) => {
  const h = harness({}, { chargers: testChargers(22) });

  it('a register jump no connector could deliver is held: no stop, not billed', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    // 5 kWh within milliseconds (22 kW delivers 6 Wh a second): past the paid 2,424 Wh.
    await station.send(station.sample(tx, 15_000));
    await sleep(300);
    expect(station.stops).toEqual([]);
    expect(h.session(sessionId)).toMatchObject({ state: 'charging', last_meter_wh: 10_000 });
    // The stop register carries the same jump: not proven either; the last counted one stands.
    await station.send(station.end(tx, 15_000, { reason: 'EVDisconnected' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, 0);
    const held = h.t.logLines.filter((l) => l.includes('above what the connector can deliver'));
    expect(held.length).toBeGreaterThanOrEqual(2);
  });

  it('a queued burst at full power is placed on the charger clock: counted and billed in full, not held', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const t0 = Date.now();
    const { tx } = await station.start(10_000, { timestamp: new Date(t0).toISOString() });
    await sleep(2_000);
    // Four samples measured 500 ms apart, 3 Wh each (21.6 kW, within 22 kW + 10%), queued and
    // sent at once: on arrival times that is megawatts, on the charger's clock it is the rate.
    for (let k = 1; k <= 4; k++) {
      const timestamp = new Date(t0 + 500 * k).toISOString();
      await station.send(station.sample(tx, 10_000 + 3 * k, { timestamp, offline: true }));
    }
    expect(h.session(sessionId).last_meter_wh).toBe(10_012);
    await station.send(station.end(tx, 10_012, { reason: 'EVDisconnected' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, 12);
  });

  it('energy the connector could deliver in the time is counted', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    await sleep(200);
    // 1 Wh in 200 ms: 18 kW, within 22 kW + 10%.
    await station.send(station.sample(tx, 10_001));
    expect(h.session(sessionId).last_meter_wh).toBe(10_001);
    await station.send(station.end(tx, 10_001, { reason: 'EVDisconnected' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, 1);
  });
});

interface Attempt {
  step: string;
  reply: string;
}

describe.each(RAW_PROTOCOLS)('field sessions, the stop: $name', (protocol) => {
  const h = harness({ stopVerifySeconds: 0.2 });
  const attempts = (id: string) =>
    h.t.gw.db
      .prepare('SELECT step, reply FROM stop_attempts WHERE session_id = ? ORDER BY id')
      .all(id) as Attempt[];
  const losses = (id: string) =>
    h.t.gw.db
      .prepare('SELECT wh, reason FROM operator_losses WHERE session_id = ? ORDER BY id')
      .all(id) as { wh: number; reason: string }[];

  it('a charger that answers the stop Accepted and keeps charging is stopped again, then escalated', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    // Past the paid 2,424 Wh: the stop goes out at once. Every stop is Accepted, and the energy
    // keeps rising, until the zero-power profile.
    await station.send(station.sample(tx, 12_500));
    const register = await keepCharging(
      station,
      tx,
      { fromWh: 12_500, stepWh: 50, everyMs: 50, timeoutMs: 10_000 },
      () => attempts(sessionId).some((a) => a.step === 'zero_power'),
    );
    expect(attempts(sessionId).slice(0, 4)).toEqual([
      { step: 'remote_stop', reply: 'accepted' },
      { step: 'remote_stop', reply: 'accepted' },
      { step: 'remote_stop', reply: 'accepted' },
      { step: 'zero_power', reply: 'accepted' },
    ]);
    expect(station.stops.length).toBe(3);
    await station.send(station.end(tx, register, { reason: 'Remote' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, register - 10_000);
    // Past the paid energy: the operator's loss, recorded; the driver pays the amount, no more.
    expect(losses(sessionId)).toEqual([
      { wh: register - 10_000 - LIMIT_WH, reason: 'beyond_paid' },
    ]);
    expect(h.session(sessionId)).toMatchObject({ cost: AMOUNT, credited: 0 });
    // The operator reads both through the operator API.
    const viewer = createOperator(h.t.gw.db, `viewer-${protocol.name}`, 'viewer');
    const record = await op(
      h.t.gw.operatorUrl,
      viewer,
      'GET',
      `/sessions/${sessionId}/stop-record`,
    );
    expect(record.status).toBe(200);
    const story = (await op(h.t.gw.operatorUrl, viewer, 'GET', `/sessions/${sessionId}`)).body as {
      stoppedBy: unknown;
      timeline: { event: string }[];
    };
    expect(story.stoppedBy).toMatchObject({ by: 'paid_energy', operatorId: null });
    expect(story.timeline.map((e) => e.event)).toContain('paid energy reached: stop sent');
    expect(record.body).toMatchObject({
      sessionId,
      lossWh: register - 10_000 - LIMIT_WH,
      attempts: expect.arrayContaining([expect.objectContaining({ step: 'zero_power' })]),
    });
  });

  it('a charger that refuses every step is not asked forever, also after it reconnects', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    refuseEverything(station);
    station.stopReplies.push('Rejected', 'Rejected', 'Rejected', 'Rejected', 'Rejected');
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 12_500));
    await waitUntil(() => attempts(sessionId).length === 6, 10_000, 'the whole ladder');
    expect(attempts(sessionId).map((a) => `${a.step} ${a.reply}`)).toEqual([
      'remote_stop rejected',
      'remote_stop rejected',
      'remote_stop rejected',
      'zero_power not_supported',
      'inoperative not_supported',
      'unlock not_supported',
    ]);
    await station.reconnect();
    await sleep(500);
    expect(attempts(sessionId).length).toBe(6);
    expect(station.stops.length).toBe(3);
    await station.send(station.end(tx, 12_600, { reason: 'Local' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, 2_600);
  });

  it('a stop that comes after a fallback settlement changes nothing but records the operator loss', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    await station.send(station.status(1, 'Charging'));
    await station.send(station.sample(tx, 10_500));
    await station.send(station.status(1, 'Available'));
    await h.settled(sessionId);
    expect(h.session(sessionId).end_reason).toBe('no_stop_connector_available');
    const end = station.end(tx, 11_000, { reason: 'EVDisconnected' });
    await station.send(end);
    await station.send(end);
    h.settledOnce(sessionId, 500);
    expect(losses(sessionId)).toEqual([{ wh: 500, reason: 'after_settlement' }]);
  });
});

/** The station answers the ladder's other steps with a CALLERROR, as firmware without them does. */
function refuseEverything(station: RawStation) {
  for (const action of ['SetChargingProfile', 'ChangeAvailability', 'UnlockConnector'])
    station.cp.handle(action, () => {
      throw new Error('not implemented');
    });
}

describe('field sessions, the stop checked after two sample intervals: OCPP 1.6J', () => {
  // Samples asked for every 3 s; sessions.stopVerifySeconds stays at its 60 s (the ceiling). The
  // wait is the same for both protocols (stop-assurance.ts).
  const h = harness({}, { ocpp: { meterSampleIntervalSeconds: 3, callTimeoutSeconds: 2 } });

  it('a charger that accepts the stop and keeps charging is stopped again after two sample intervals, not a minute', async () => {
    const { station, sessionId } = await h.paidSession(raw16);
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 12_500)); // past the paid 2,424 Wh: stopped at once
    await waitUntil(() => station.stops.length === 1, 5000, 'first stop');
    const firstAt = Date.now();
    const register = await keepCharging(
      station,
      tx,
      { fromWh: 12_500, stepWh: 100, everyMs: 250, timeoutMs: 20_000 },
      () => station.stops.length > 1,
    );
    expect(Date.now() - firstAt).toBeGreaterThanOrEqual(5_900);
    await station.send(station.end(tx, register, { reason: 'Remote' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, register - 10_000);
  });
});

describe.each(RAW_PROTOCOLS)('field sessions, nothing runs unpaid: $name', (protocol) => {
  const h = harness({ startTimeoutSeconds: 0.5 });

  it('an EV plugged in after the refund: its transaction is answered Invalid and stopped', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    await waitUntil(() => h.session(sessionId).state === 'refunded', 5000, 'refund');
    const { tx, reply } = await station.start(10_000);
    expect(JSON.stringify(reply)).toContain('Invalid');
    await waitUntil(() => station.stops.includes(tx.ref), 5000, 'stop of the refused transaction');
    await station.send(station.end(tx, 10_100, { reason: 'Remote' }));
    expect(h.session(sessionId).state).toBe('refunded');
  });
});

describe.each(RAW_PROTOCOLS)('field sessions, recovery: $name', (protocol) => {
  const h = harness({ startTimeoutSeconds: 1, recoveryWaitSeconds: 30 });

  it('after a restart, a session whose charger is still offline waits for it, and its queued start is accepted', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    expect(h.session(sessionId).state).toBe('authorized');
    await station.close();
    await h.t.restart();
    // Past the start timeout, within the recovery wait: not refunded.
    await sleep(1_500);
    expect(h.session(sessionId).state).toBe('authorized');
    await station.reconnect();
    const { tx, reply } = await station.start(10_000);
    expect(JSON.stringify(reply)).toContain('Accepted');
    expect(h.session(sessionId).state).toBe('charging');
    await station.send(station.end(tx, 10_300, { reason: 'EVDisconnected' }));
    h.settledOnce(sessionId, 300);
  });

  it('a charger that rebooted and forgot its transaction: settled on the last register within the grace', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 10_000));
    await station.reboot();
    await station.send(station.status(1, 'Available'));
    await h.settled(sessionId);
    expect(h.session(sessionId).end_reason).toBe('no_stop_connector_available');
    h.settledOnce(sessionId, 0);
  });
});

describe('field sessions, recovery: OCPP 1.6J after a reboot', () => {
  const h = harness({});

  it('1.6: Preparing after a reboot (the cable still in, the transaction forgotten) is an end: settled on the last register within the grace', async () => {
    const { station, sessionId } = await h.paidSession(raw16);
    await station.start(10_000);
    await station.send(station.status(1, 'Charging'));
    // Before any reboot, Preparing is not an end (a charger may report it late): longer than the
    // grace, the session goes on.
    await station.send(station.status(1, 'Preparing'));
    await sleep(600);
    expect(h.session(sessionId).state).toBe('charging');
    await station.reboot();
    await station.send(station.status(1, 'Preparing'));
    await h.settled(sessionId);
    expect(h.session(sessionId).end_reason).toBe('no_stop_connector_available');
    h.settledOnce(sessionId, 0);
  });

  it('1.6: a charger back from a reboot with its transaction still Charging is not ended', async () => {
    const { station, sessionId } = await h.paidSession(raw16);
    const { tx } = await station.start(10_000);
    await station.reboot();
    await station.send(station.status(1, 'Charging'));
    await sleep(600);
    expect(h.session(sessionId).state).toBe('charging');
    await station.send(station.end(tx, 10_100, { reason: 'EVDisconnected' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, 100);
  });
});

describe('field sessions, recovery: OCPP 2.0.1 GetTransactionStatus', () => {
  const h = harness({});

  it('a station that says the transaction is not ongoing, with nothing queued, is settled on reconnect', async () => {
    const { station, sessionId } = await h.paidSession(raw201);
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 10_700));
    const asked: string[] = [];
    const forgot = (cp: RawStation['cp']) =>
      cp.handle('GetTransactionStatus', async ({ params }) => {
        asked.push((params as { transactionId: string }).transactionId);
        return { ongoingIndicator: false, messagesInQueue: false };
      });
    // The question goes out as the station connects: its answer is set on each new connection
    // (a reconnect races the gateway's first call, so it is tried again until it was asked).
    await waitUntil(
      async () => {
        await station.reconnect();
        forgot(station.cp);
        await sleep(200);
        return asked.length > 0;
      },
      10_000,
      'GetTransactionStatus',
    );
    await h.settled(sessionId);
    expect(asked).toContain(tx.ref);
    expect(h.session(sessionId).end_reason).toBe('no_stop_charger_ended');
    h.settledOnce(sessionId, 700);
  });
});

describe('field sessions, connectors after a transaction: OCPP 2.0.1', () => {
  const h = harness({});

  it('2.0.1: the EVSE whose transaction ended with the EV still plugged takes a new start', async () => {
    const { station, sessionId } = await h.paidSession(raw201);
    const { tx } = await station.start(10_000);
    await station.send(station.end(tx, 10_400, { reason: 'Local' }));
    await h.settled(sessionId);
    // The station keeps reporting the EVSE Occupied and sends no StatusNotification.
    expect((await startAgain(h.t.gw.url)).status).toBe(200);
  });
});

describe('field sessions, a triggered status mid-charge: OCPP 2.0.1', () => {
  const h = harness({});

  it('2.0.1: Occupied answered to a TriggerMessage during a transaction keeps the EVSE charging; a fault is still taken', async () => {
    const { station } = await h.paidSession(raw201);
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 10_300));
    const viewer = createOperator(h.t.gw.db, 'viewer-trigger', 'viewer');
    const connector = async () =>
      (
        (await op(h.t.gw.operatorUrl, viewer, 'GET', '/chargers/CP-1')).body as {
          connectors: { connectorId: string; status: string }[];
        }
      ).connectors.find((c) => c.connectorId === '1')?.status;
    expect(await connector()).toBe('charging');
    await station.send(station.status(1, 'Charging')); // on the wire: Occupied
    expect(await connector()).toBe('charging');
    const fault = {
      action: 'StatusNotification',
      params: {
        timestamp: new Date().toISOString(),
        connectorStatus: 'Faulted',
        evseId: 1,
        connectorId: 1,
      },
    };
    await station.send(fault);
    expect(await connector()).toBe('faulted');
    await station.send(station.status(1, 'Charging'));
    expect(await connector()).toBe('occupied');
  });
});

describe('field sessions, connectors after a transaction: OCPP 1.6J', () => {
  const h = harness({});

  it('1.6: Finishing refuses a new start and says why; Preparing takes it', async () => {
    const { station, sessionId } = await h.paidSession(raw16);
    const { tx } = await station.start(10_000);
    await station.send(station.end(tx, 10_400, { reason: 'Local' }));
    await h.settled(sessionId);
    const status = (s: string) =>
      station.send({
        action: 'StatusNotification',
        params: { connectorId: 1, errorCode: 'NoError', status: s },
      });
    await status('Finishing');
    const refused = await startAgain(h.t.gw.url);
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toContain('unplug the EV and plug it in again');
    await status('Preparing');
    expect((await startAgain(h.t.gw.url)).status).toBe(200);
  });
});

/** A new Start on CP-1 connector 1, after the last session there has ended. */
async function startAgain(url: string) {
  return startSession(
    url,
    await mintToken(url, API_KEY, DRIVERS.ada.email),
    { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
    AMOUNT,
  );
}
