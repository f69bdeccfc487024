import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { IdTokenStore } from '../src/id-tokens/id-token-store.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { mintToken, startSession, type JsonResponse } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import { CARDS, TAPS_CONFIG } from './helpers/tap-site.js';
import { waitUntil } from './helpers/wait.js';
import { Station21, type PeerTx } from './helpers/ocpp21-peer/station.js';
import { frameProblems } from './helpers/ocpp21-peer/strict-frames.js';

/**
 * The gateway against a strict OCPP 2.1 station built on typed-ocpp, an implementation of the
 * 2.1 schemas independent of the gateway's ocpp-rpc: every frame the gateway sends is checked,
 * and any the schemas refuse fails the test that provoked it.
 */

const txLimitResult = (limit: object) => [3, 'm1', { transactionLimit: limit }];
const txEventCall = [
  2,
  'm1',
  'TransactionEvent',
  {
    eventType: 'Started',
    timestamp: '2026-12-06T10:00:00.000Z',
    triggerReason: 'RemoteStart',
    seqNo: 0,
    transactionInfo: { transactionId: 'tx-1' },
  },
];

describe('the peer’s validator', () => {
  it('takes a valid 2.1 frame and refuses each kind of invalid one', () => {
    expect(frameProblems(txEventCall)).toEqual([]);
    expect(frameProblems(txLimitResult({ maxEnergy: 2424, maxCost: 1000 }), txEventCall)).toEqual(
      [],
    );
    // A number sent as a string, a property 2.1 does not define, a required field missing.
    expect(frameProblems(txLimitResult({ maxEnergy: '2424' }), txEventCall)).not.toEqual([]);
    expect(frameProblems(txLimitResult({ maxEnergyWh: 2424 }), txEventCall)).toEqual([
      'payload.transactionLimit.maxEnergyWh: a property the 2.1 schema does not allow',
    ]);
    expect(frameProblems([2, 'm2', 'RequestStartTransaction', { remoteStartId: 1 }])).not.toEqual(
      [],
    );
    // A result is judged by the action it answers, and one that answers nothing is refused.
    expect(frameProblems([3, 'm1', { status: 'Accepted' }], txEventCall)).not.toEqual([]);
    expect(frameProblems(txLimitResult({ maxEnergy: 1 }))).toEqual([
      'a CALLRESULT that answers no call',
    ]);
  });
});

/** A scripted central system that answers the Started event with a limit, then sends a bad frame. */
async function scriptedCentralSystem(limit: object) {
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    handleProtocols: (protocols) => (protocols.has('ocpp2.1') ? 'ocpp2.1' : false),
  });
  await once(wss, 'listening');
  const events: Record<string, unknown>[] = [];
  const errors: unknown[] = [];
  let socket: WebSocket | undefined;
  wss.on('connection', (ws) => {
    socket = ws;
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString('utf8')) as unknown[];
      if (frame[0] === 4) errors.push(frame);
      if (frame[0] !== 2) return;
      const [, id, action, params] = frame as [number, string, string, Record<string, unknown>];
      let reply: object = {};
      if (action === 'BootNotification')
        reply = { status: 'Accepted', currentTime: new Date().toISOString(), interval: 300 };
      if (action === 'TransactionEvent') {
        events.push(params);
        if (params.eventType === 'Started') reply = { transactionLimit: limit };
      }
      ws.send(JSON.stringify([3, id, reply]));
    });
  });
  const port = (wss.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}/ocpp`,
    events,
    errors,
    send: (frame: unknown[]) => socket?.send(JSON.stringify(frame)),
    close: () => new Promise((resolve) => wss.close(resolve)),
  };
}

describe('the peer as a 2.1 station', () => {
  it('holds the limit it is given, confirms it, stops at maxEnergy, and refuses an invalid call', async () => {
    const csms = await scriptedCentralSystem({ maxEnergy: 1_500 });
    const station = new Station21({ url: csms.url, identity: 'CP-X', password: 'x', evses: 1 });
    try {
      await station.connect();
      expect(await station.boot()).toBe('Accepted');
      const { tx } = await station.tap(1, { idToken: 'CARD-1', type: 'ISO14443' }).catch(() => ({
        tx: undefined,
      }));
      // The scripted system answers Authorize with {}: not valid 2.1, so the call is refused.
      expect(tx).toBeUndefined();
      expect(station.violations.map((v) => v.frame)).toEqual([[3, expect.any(String), {}]]);
      station.violations.length = 0;

      await startByGateway(csms, station);
      const started = station.active(1) as PeerTx;
      expect(started.limit).toEqual({ maxEnergy: 1_500 });
      expect(csms.events.map((e) => e.triggerReason)).toEqual(['RemoteStart', 'LimitSet']);
      expect(await station.charge(started, 1_000)).toBe('charging');
      expect(await station.charge(started, 1_000)).toBe('limit reached');
      const ended = csms.events.at(-1) as {
        triggerReason: string;
        transactionInfo: { stoppedReason: string };
        meterValue: { sampledValue: { value: number }[] }[];
      };
      expect(ended.triggerReason).toBe('EnergyLimitReached');
      expect(ended.transactionInfo.stoppedReason).toBe('EnergyLimitReached');
      expect(ended.meterValue[0]?.sampledValue[0]?.value).toBe(100_000 + 1_500);

      // A transactionId that is a number: the station answers FormationViolation and keeps the frame.
      csms.send([2, 'bad-1', 'RequestStopTransaction', { transactionId: 7 }]);
      await waitUntil(() => csms.errors.length === 1, 5000, 'the CALLERROR');
      expect((csms.errors[0] as unknown[]).slice(0, 3)).toEqual([4, 'bad-1', 'FormationViolation']);
      expect(station.violations).toHaveLength(1);
      station.violations.length = 0;
    } finally {
      await station.close();
      await csms.close();
    }
  });
});

/** The scripted system asks for a remote start; resolves once the station's Started is answered. */
async function startByGateway(
  csms: Awaited<ReturnType<typeof scriptedCentralSystem>>,
  station: Station21,
) {
  csms.send([
    2,
    'start-1',
    'RequestStartTransaction',
    { idToken: { idToken: 'APP-1', type: 'Central' }, remoteStartId: 1, evseId: 1 },
  ]);
  await waitUntil(() => csms.events.length >= 2, 5000, 'Started and LimitSet');
  expect(station.active(1)).toBeDefined();
}

describe('the gateway against the strict 2.1 peer', () => {
  let t: TestGateway;
  let station: Station21;
  let operator: string;

  beforeAll(async () => {
    t = await startTestGateway({ taps: TAPS_CONFIG });
    new IdTokenStore(t.gw.db).bind({ ...CARDS.ada, source: 'operator' }, new Date().toISOString());
    operator = createOperator(t.gw.db, 'otto', 'operator');
    station = new Station21({
      url: t.gw.ocppUrl,
      identity: 'CP-1',
      password: CHARGER_PASSWORD,
      evses: 2,
    });
    await station.connect();
  });
  afterEach(() => {
    // Every frame the gateway sent in the test is valid 2.1, and so was the peer's every answer.
    expect(station.violations).toEqual([]);
  });
  afterAll(async () => {
    await station.close();
    await t.close();
  });

  const session = (id: string) =>
    t.gw.db
      .prepare(
        'SELECT state, limit_wh, delivered_wh, cost, end_reason, stop_line FROM sessions WHERE id = ?',
      )
      .get(id) as {
      state: string;
      limit_wh: number;
      delivered_wh: number | null;
      cost: number | null;
      stop_line: string | null;
    };
  const settled = (id: string) =>
    waitUntil(() => session(id).state === 'settled' && session(id), 10_000, `${id} settled`);
  const ledgerClean = () =>
    expect(verifyLedger(t.gw.db).checks.filter((c) => c.violations.length > 0)).toEqual([]);
  const act = (path: string, body?: unknown) => op(t.gw.operatorUrl, operator, 'POST', path, body);
  const answer = (res: JsonResponse) => {
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body as { status: string }).status;
  };
  const callsOf = (action: string) => station.calls.filter((c) => c.action === action);
  /** Any limit the gateway hands the station for a transaction is its session's paid energy. */
  const limitsArePaidEnergy = (tx: PeerTx, paidWh: number) => {
    for (const { limit } of station.limits.filter((l) => l.transactionId === tx.transactionId))
      expect(limit.maxEnergy).toBe(paidWh);
  };

  it('boots, reports status and takes the configuration by its own device model', async () => {
    expect(await station.boot()).toBe('Accepted');
    expect(
      t.gw.db.prepare("SELECT protocol FROM charger_info WHERE charger_id = 'CP-1'").get(),
    ).toEqual({ protocol: 'ocpp2.1' });
    await waitUntil(
      () => station.model.value('SampledDataCtrlr.TxUpdatedInterval') === '10',
      5000,
      'SetVariables',
    );
    expect(callsOf('GetVariables').length).toBeGreaterThan(0);
    expect(station.model.value('SampledDataCtrlr.TxUpdatedMeasurands')).toBe(
      'Energy.Active.Import.Register,Power.Active.Import,SoC',
    );
    expect(station.model.value('TxCtrlr.StopTxOnInvalidId')).toBe('true');
  });

  it('runs a paid app session to the paid energy and settles it', async () => {
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const res = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      1_000,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const sessionId = (res.body as { sessionId: string }).sessionId;
    const tx = await waitUntil(() => station.active(1), 5000, 'the remote start');
    expect(callsOf('RequestStartTransaction')).toHaveLength(1);
    // The station draws 400 Wh a sample up to the paid energy; then one of the two lines stops it.
    const paidWh = session(sessionId).limit_wh;
    while (!tx.ended && station.register(1) - tx.startWh < paidWh) await station.charge(tx, 400);
    await waitUntil(() => tx.ended, 5000, 'the stop at the paid energy');
    // The gateway's stop, or the station's own at the limit the gateway handed it.
    expect(['RemoteStop', 'EnergyLimitReached']).toContain(tx.ended?.triggerReason);
    const row = await settled(sessionId);
    expect(row.delivered_wh).toBe(station.register(1) - tx.startWh);
    if (tx.ended?.triggerReason === 'EnergyLimitReached') {
      // The station's own line: exactly at the limit it was handed, the paid energy.
      expect(row.delivered_wh).toBe(paidWh);
      expect(row.stop_line).toBe('station_limit');
    } else {
      // The gateway's line stops on the possible: this test's samples come milliseconds apart,
      // so the rate it plans with is huge and it may stop well before the paid energy; never a
      // sample past it.
      expect(row.delivered_wh).toBeLessThan(paidWh + 400);
      expect(row.stop_line).toBe('paid_energy');
    }
    expect(row.cost).toBeLessThanOrEqual(1_000);
    limitsArePaidEnergy(tx, row.limit_wh);
    ledgerClean();
  });

  it('starts a session from a card at the station and settles the station’s own stop', async () => {
    const stranger = await station.tap(2, { idToken: 'NOT-A-FLEET-CARD', type: 'ISO14443' });
    expect(stranger.status).not.toBe('Accepted');
    expect(stranger.tx).toBeUndefined();
    const card = { idToken: CARDS.ada.value, type: 'ISO14443' };
    const { status, tx } = await station.tap(2, card);
    expect(status).toBe('Accepted');
    const started = tx as PeerTx;
    await station.charge(started, 1_000);
    await station.charge(started, 1_000);
    await station.stopLocally(started);
    const sessionId = await waitUntil(
      () =>
        (
          t.gw.db
            .prepare("SELECT id FROM sessions WHERE origin <> 'app' AND connector_id = '2'")
            .get() as { id: string } | undefined
        )?.id,
      5000,
      'the tap session',
    );
    const row = await settled(sessionId);
    expect(row.delivered_wh).toBe(2_000);
    expect(row.cost).toBe(Math.floor((2_000 * 412.5) / 1_000));
    limitsArePaidEnergy(started, row.limit_wh);
    ledgerClean();
  });

  it('answers the operator’s trigger, availability and resets', async () => {
    // An earlier session's stop may have prompted a TransactionEvent (the stop ladder): not ours.
    const triggersBefore = callsOf('TriggerMessage').length;
    expect(
      answer(await act('/chargers/CP-1/trigger', { message: 'status', connectorId: '2' })),
    ).toBe('Accepted');
    expect(
      answer(await act('/chargers/CP-1/trigger', { message: 'meter', connectorId: '1' })),
    ).toBe('Accepted');
    expect(
      callsOf('TriggerMessage')
        .slice(triggersBefore)
        .map((c) => c.params.requestedMessage),
    ).toEqual(['StatusNotification', 'MeterValues']);

    expect(
      answer(await act('/chargers/CP-1/connectors/2/availability', { operative: false })),
    ).toBe('Accepted');
    await waitUntil(() => station.statuses.at(-1)?.status === 'Unavailable', 5000, 'Unavailable');
    expect(answer(await act('/chargers/CP-1/connectors/2/availability', { operative: true }))).toBe(
      'Accepted',
    );
    expect(callsOf('ChangeAvailability').map((c) => c.params.operationalStatus)).toEqual([
      'Inoperative',
      'Operative',
    ]);

    const boots = () => callsOf('GetVariables').length;
    const before = boots();
    expect(answer(await act('/chargers/CP-1/reset', { type: 'soft' }))).toBe('Accepted');
    // The station reboots: a new connection, a new boot, configured again.
    await waitUntil(() => boots() > before, 10_000, 'the configuration after the reboot');
    const afterSoft = boots();
    expect(answer(await act('/chargers/CP-1/reset', { type: 'hard' }))).toBe('Accepted');
    await waitUntil(() => boots() > afterSoft, 10_000, 'the configuration after the hard reset');
    expect(callsOf('Reset').map((c) => c.params.type)).toEqual(['OnIdle', 'Immediate']);
  });
});
