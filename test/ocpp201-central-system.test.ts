import { SessionReads } from '../src/operator/read-model/sessions.js';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { ChargePoint201 } from '../simulators/ocpp201/charge-point.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { mintToken, quote, startSession } from './helpers/http.js';
import { rawCharger, type RawClient } from './helpers/raw-charger.js';
import { IONIQ } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

/** The 2.0.1-specific rules, with frames a well-behaved simulator would not send on its own. */

let t: TestGateway;
const clients: RawClient[] = [];
beforeAll(async () => {
  t = await startTestGateway();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close({ force: true })));
});
afterAll(async () => {
  await t.close();
});

interface RemoteStart {
  evseId: number;
  remoteStartId: number;
  idToken: { idToken: string; type: string };
}

/** A raw 2.0.1 station that records what the gateway asks of it and accepts everything. */
async function station(identity: string, protocols = ['ocpp2.0.1']) {
  const cp = await rawCharger(t.gw.ocppUrl, identity, CHARGER_PASSWORD, protocols);
  clients.push(cp);
  const variables: Record<string, string> = {};
  const remoteStarts: RemoteStart[] = [];
  const stops: string[] = [];
  let startReply: { status: string; transactionId?: string } = { status: 'Accepted' };
  cp.handle('SetVariables', async ({ params }) => {
    const { setVariableData } = params as {
      setVariableData: {
        component: { name: string };
        variable: { name: string };
        attributeValue: string;
      }[];
    };
    for (const d of setVariableData)
      variables[`${d.component.name}.${d.variable.name}`] = d.attributeValue;
    return {
      setVariableResult: setVariableData.map((d) => ({
        attributeStatus: 'Accepted',
        component: d.component,
        variable: d.variable,
      })),
    };
  });
  cp.handle('RequestStartTransaction', async ({ params }) => {
    remoteStarts.push(params as RemoteStart);
    return startReply;
  });
  cp.handle('RequestStopTransaction', async ({ params }) => {
    stops.push((params as { transactionId: string }).transactionId);
    return { status: 'Accepted' };
  });
  return {
    cp,
    variables,
    remoteStarts,
    stops,
    replyToStart(reply: typeof startReply) {
      startReply = reply;
    },
  };
}

const now = () => new Date().toISOString();

function register(wh: number, context = 'Sample.Periodic', extra: object[] = []) {
  return [
    {
      timestamp: now(),
      sampledValue: [{ value: wh, context, measurand: 'Energy.Active.Import.Register' }, ...extra],
    },
  ];
}

interface TxEvent {
  eventType: 'Started' | 'Updated' | 'Ended';
  seqNo: number;
  transactionId: string;
  triggerReason?: string;
  idToken?: string;
  evseId?: number;
  remoteStartId?: number;
  meterValue?: unknown[];
  stoppedReason?: string;
  chargingState?: string;
  offline?: boolean;
  timestamp?: string;
}

function txEvent(e: TxEvent) {
  return {
    eventType: e.eventType,
    timestamp: e.timestamp ?? now(),
    triggerReason: e.triggerReason ?? 'MeterValuePeriodic',
    seqNo: e.seqNo,
    ...(e.offline !== undefined && { offline: e.offline }),
    transactionInfo: {
      transactionId: e.transactionId,
      ...(e.chargingState && { chargingState: e.chargingState }),
      ...(e.stoppedReason && { stoppedReason: e.stoppedReason }),
      ...(e.remoteStartId !== undefined && { remoteStartId: e.remoteStartId }),
    },
    ...(e.idToken && { idToken: { idToken: e.idToken, type: 'Central' } }),
    ...(e.evseId !== undefined && { evse: { id: e.evseId, connectorId: 1 } }),
    ...(e.meterValue && { meterValue: e.meterValue }),
  };
}

interface SessionRow {
  state: string;
  transaction_ref: string | null;
  meter_start_wh: number | null;
  delivered_wh: number | null;
  cost: number | null;
  credited: number | null;
  end_reason: string | null;
}

const session = (id: string) =>
  t.gw.db.prepare('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow;
const outcomes = (id: string) =>
  t.gw.db
    .prepare(
      "SELECT count(*) AS n FROM ledger_entries WHERE session_id = ? AND kind IN ('session_credit', 'session_refund')",
    )
    .get(id) as { n: number };
const notes = (chargerId: string) =>
  (
    t.gw.db
      .prepare('SELECT action, note FROM ocpp_events WHERE charger_id = ? ORDER BY seq')
      .all(chargerId) as { action: string; note: string }[]
  ).map((e) => `${e.action}: ${e.note}`);

function ledgerVerifies() {
  const report = verifyLedger(t.gw.db);
  expect(report.checks.filter((c) => c.violations.length > 0)).toEqual([]);
}

async function boot(cp: RawClient) {
  const reply = (await cp.call('BootNotification', {
    reason: 'PowerUp',
    chargingStation: { vendorName: 'Acme', model: 'DC150', firmwareVersion: '2.0.1-test' },
  })) as { status: string; interval: number };
  expect(reply.status).toBe('Accepted');
  for (const evseId of [1, 2]) {
    await cp.call('StatusNotification', {
      timestamp: now(),
      connectorStatus: 'Available',
      evseId,
      connectorId: 1,
    });
  }
}

/** Starts a paid session on CP-1 through the API; the raw station records the remote start. */
async function paidSession(s: Awaited<ReturnType<typeof station>>, connectorId: string) {
  const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
  const res = await startSession(
    t.gw.url,
    token,
    { chargerId: 'CP-1', connectorId, driverEmail: DRIVERS.ada.email },
    1_000, // 2,424 Wh at 412.5 NGN/kWh
  );
  expect(res.status).toBe(200);
  const remote = s.remoteStarts.at(-1) as RemoteStart;
  return { sessionId: (res.body as { sessionId: string }).sessionId, remote };
}

/** The Started event of the remote-started transaction on EVSE 1, its register at `beginWh`. */
function remoteStartedEvent(remote: RemoteStart, transactionId: string, beginWh: number) {
  return txEvent({
    eventType: 'Started',
    seqNo: 0,
    transactionId,
    triggerReason: 'RemoteStart',
    idToken: remote.idToken.idToken,
    evseId: 1,
    remoteStartId: remote.remoteStartId,
    chargingState: 'Charging',
    meterValue: register(beginWh, 'Transaction.Begin'),
  });
}

/** The station starts the remote-started transaction on EVSE 1 at `beginWh`; returns its id. */
async function remoteStarted(cp: RawClient, remote: RemoteStart, beginWh: number) {
  const transactionId = randomUUID();
  await cp.call('TransactionEvent', remoteStartedEvent(remote, transactionId, beginWh));
  return transactionId;
}

describe('OCPP 2.0.1 central system', () => {
  it('speaks what the charger prefers of the versions it knows, and refuses anything else', async () => {
    const both = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD, [
      'ocpp2.0.1',
      'ocpp1.6',
    ]);
    expect(both.protocol).toBe('ocpp2.0.1');
    await both.close();
    const older = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD, [
      'ocpp1.6',
      'ocpp2.0.1',
    ]);
    expect(older.protocol).toBe('ocpp1.6');
    await older.close();
    await expect(
      rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD, ['ocpp1.5']),
    ).rejects.toThrow();
    const info = t.gw.db
      .prepare("SELECT protocol FROM charger_info WHERE charger_id = 'CP-AC'")
      .get() as { protocol: string };
    expect(info.protocol).toBe('ocpp1.6');
  });

  it('answers boot, sets the sampling variables, and keeps status, SoC and battery for the quote', async () => {
    const s = await station('CP-1');
    await boot(s.cp);
    await waitUntil(() => Object.keys(s.variables).length === 6, 5000, 'SetVariables');
    expect(s.variables).toEqual({
      'SampledDataCtrlr.TxUpdatedInterval': '10',
      'SampledDataCtrlr.TxUpdatedMeasurands':
        'Energy.Active.Import.Register,Power.Active.Import,SoC',
      'SampledDataCtrlr.TxStartedMeasurands': 'Energy.Active.Import.Register',
      'SampledDataCtrlr.TxEndedMeasurands': 'Energy.Active.Import.Register',
      // 80% of the 5 s start timeout: the station gives up before the gateway refunds.
      'TxCtrlr.EVConnectionTimeOut': '4',
      'TxCtrlr.StopTxOnInvalidId': 'true',
    });
    expect(await s.cp.call('Heartbeat', {})).toHaveProperty('currentTime');
    await s.cp.call('StatusNotification', {
      timestamp: now(),
      connectorStatus: 'Occupied',
      evseId: 2,
      connectorId: 1,
    });
    expect(
      await s.cp.call('NotifyEVChargingNeeds', {
        evseId: 2,
        chargingNeeds: {
          requestedEnergyTransfer: 'DC',
          dcChargingParameters: {
            evMaxCurrent: 400,
            evMaxVoltage: 800,
            stateOfCharge: 40,
            evEnergyCapacity: 60_000,
          },
        },
      }),
    ).toEqual({ status: 'Accepted' });
    // bola has no assigned vehicle: the charger's battery replaces the default's 60 kWh.
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.bola.email);
    const q = await quote(t.gw.url, token, {
      chargerId: 'CP-1',
      connectorId: '2',
      driverEmail: DRIVERS.bola.email,
    });
    expect(q.status).toBe(200);
    expect(q.body).toMatchObject({
      socPercent: 40,
      socSource: 'charger',
      quotedAmount: Math.ceil((((60_000 * 0.6) / 0.9) * 412.5) / 1000),
    });
    await s.cp.call('NotifyEVChargingNeeds', {
      evseId: 2,
      chargingNeeds: {
        requestedEnergyTransfer: 'DC',
        dcChargingParameters: {
          evMaxCurrent: 400,
          evMaxVoltage: 800,
          stateOfCharge: 70,
          evEnergyCapacity: 30_000,
        },
      },
    });
    const q2 = await quote(t.gw.url, token, {
      chargerId: 'CP-1',
      connectorId: '2',
      driverEmail: DRIVERS.bola.email,
    });
    expect(q2.body).toMatchObject({
      socPercent: 70,
      quotedAmount: Math.ceil((((30_000 * 0.3) / 0.9) * 412.5) / 1000),
    });
    await s.cp.call('StatusNotification', {
      timestamp: now(),
      connectorStatus: 'Available',
      evseId: 2,
      connectorId: 1,
    });
    // The vehicle left: its SoC is forgotten, in memory and in the row a restart reads.
    const q3 = await quote(t.gw.url, token, {
      chargerId: 'CP-1',
      connectorId: '2',
      driverEmail: DRIVERS.bola.email,
    });
    expect(q3.body).toMatchObject({ socSource: 'unknown' });
    expect(
      t.gw.db
        .prepare(
          "SELECT status, soc_percent, soc_at, battery_wh FROM connector_state WHERE charger_id = 'CP-1' AND connector_id = '2'",
        )
        .get(),
    ).toEqual({ status: 'available', soc_percent: null, soc_at: null, battery_wh: null });
  });

  it('answers and records NotifyEvent, SecurityEventNotification and NotifyReport', async () => {
    const s = await station('CP-AC');
    expect(
      await s.cp.call('SecurityEventNotification', {
        type: 'SettingSystemTime',
        timestamp: now(),
      }),
    ).toEqual({});
    expect(
      await s.cp.call('NotifyEvent', {
        generatedAt: now(),
        seqNo: 0,
        eventData: [
          {
            eventId: 1,
            timestamp: now(),
            trigger: 'Alerting',
            actualValue: 'true',
            eventNotificationType: 'HardWiredNotification',
            component: { name: 'Connector', evse: { id: 1, connectorId: 1 } },
            variable: { name: 'Problem' },
          },
        ],
      }),
    ).toEqual({});
    expect(await s.cp.call('NotifyReport', { requestId: 1, generatedAt: now(), seqNo: 0 })).toEqual(
      {},
    );
    expect(notes('CP-AC')).toEqual(
      expect.arrayContaining([
        'SecurityEventNotification: SettingSystemTime',
        'NotifyEvent: noted',
        'NotifyReport: noted',
      ]),
    );
    // Strict mode: a schema-invalid frame is a CALLERROR, not a crash.
    await expect(s.cp.call('TransactionEvent', { eventType: 'Started' })).rejects.toThrow();
    await expect(
      s.cp.call('Authorize', { idToken: { idToken: 'RFID-123', type: 'ISO14443' } }),
      // Bound to no driver: Unknown (docs/driver-tokens.md "A tap pays").
    ).resolves.toEqual({ idTokenInfo: { status: 'Unknown' } });
  });

  it('refuses a transaction it did not start', async () => {
    const s = await station('CP-AC');
    const reply = await s.cp.call(
      'TransactionEvent',
      txEvent({
        eventType: 'Started',
        seqNo: 0,
        transactionId: randomUUID(),
        triggerReason: 'Authorized',
        idToken: 'RFID-FOREIGN',
        evseId: 1,
        meterValue: register(5_000, 'Transaction.Begin'),
      }),
    );
    expect(reply).toEqual({ idTokenInfo: { status: 'Unknown' } });
    expect(notes('CP-AC')).toContain('TransactionEvent: transaction not started by us: Invalid');
  });

  it('remote start with remoteStartId and a Central idToken; replays and out-of-order events settle once', async () => {
    const s = await station('CP-1');
    await boot(s.cp);
    const { sessionId, remote } = await paidSession(s, '1');
    expect(remote.evseId).toBe(1);
    expect(remote.idToken.type).toBe('Central');
    expect(Number.isInteger(remote.remoteStartId)).toBe(true);

    const transactionId = randomUUID();
    const started = remoteStartedEvent(remote, transactionId, 10_000);
    expect(await s.cp.call('TransactionEvent', started)).toEqual({
      idTokenInfo: { status: 'Accepted' },
    });
    expect(session(sessionId)).toMatchObject({
      state: 'charging',
      transaction_ref: transactionId,
      meter_start_wh: 10_000,
    });
    // The same Started again (its reply was lost): same answer, nothing new.
    expect(await s.cp.call('TransactionEvent', started)).toEqual({
      idTokenInfo: { status: 'Accepted' },
    });
    await s.cp.call(
      'TransactionEvent',
      txEvent({ eventType: 'Updated', seqNo: 1, transactionId, meterValue: register(10_800) }),
    );
    // Ended (seqNo 3) overtakes Updated (seqNo 2).
    const ended = txEvent({
      eventType: 'Ended',
      seqNo: 3,
      transactionId,
      triggerReason: 'StopAuthorized',
      stoppedReason: 'Local',
      meterValue: register(11_500, 'Transaction.End'),
    });
    await s.cp.call('TransactionEvent', ended);
    await s.cp.call(
      'TransactionEvent',
      txEvent({ eventType: 'Updated', seqNo: 2, transactionId, meterValue: register(11_200) }),
    );
    await s.cp.call('TransactionEvent', ended);
    await s.cp.call('TransactionEvent', { ...ended, seqNo: 4, timestamp: now() });

    expect(session(sessionId)).toMatchObject({
      state: 'settled',
      delivered_wh: 1_500,
      cost: Math.floor((1_500 * 412_500) / 1_000_000),
      end_reason: 'Local',
    });
    expect(outcomes(sessionId).n).toBe(1);
    expect(notes('CP-1')).toEqual(
      expect.arrayContaining([
        'TransactionEvent: repeated event answered again',
        'TransactionEvent: second Ended for the transaction: ignored',
      ]),
    );
    ledgerVerifies();
  });

  it('a meter sample moves the register and the activity stamp in one row; a reused seqNo is applied and noted', async () => {
    const s = await station('CP-1');
    await boot(s.cp);
    const { sessionId, remote } = await paidSession(s, '1');
    const transactionId = await remoteStarted(s.cp, remote, 20_000);
    const activity = () =>
      t.gw.db
        .prepare('SELECT last_activity_at AS at, last_meter_wh AS wh FROM sessions WHERE id = ?')
        .get(sessionId) as { at: string; wh: number };
    const before = activity();
    await new Promise((r) => setTimeout(r, 5));
    await s.cp.call(
      'TransactionEvent',
      txEvent({ eventType: 'Updated', seqNo: 1, transactionId, meterValue: register(20_400) }),
    );
    const after = activity();
    expect(after.wh).toBe(20_400);
    expect(Date.parse(after.at)).toBeGreaterThan(Date.parse(before.at));
    // A charger bug: seqNo 1 again, for a different event. It is recorded once, and applied.
    await s.cp.call(
      'TransactionEvent',
      txEvent({
        eventType: 'Updated',
        seqNo: 1,
        transactionId,
        timestamp: new Date(Date.now() + 1_000).toISOString(),
        meterValue: register(20_900),
      }),
    );
    expect(activity().wh).toBe(20_900);
    expect(notes('CP-1')).toContain('TransactionEvent: seqNo reused for another event: applied');
    const events = t.gw.db
      .prepare(
        `SELECT count(*) AS n FROM ocpp201_transaction_events JOIN ocpp201_transactions USING (tx_key)
         WHERE charger_id = ? AND transaction_id = ?`,
      )
      .get('CP-1', transactionId) as { n: number };
    expect(events.n).toBe(2);
    await s.cp.call(
      'TransactionEvent',
      txEvent({
        eventType: 'Ended',
        seqNo: 2,
        transactionId,
        triggerReason: 'StopAuthorized',
        stoppedReason: 'Local',
        meterValue: register(21_000, 'Transaction.End'),
      }),
    );
    expect(session(sessionId)).toMatchObject({ state: 'settled', delivered_wh: 1_000 });
    // The operator's record of the transaction: each event once, by seqNo, under the charger's id.
    const record = new SessionReads(t.gw.db).transaction(sessionId);
    expect(Object.keys(record ?? {})).not.toContain('txKey');
    expect(record).toMatchObject({ protocol: 'ocpp2.0.1', transactionId });
    expect(
      (record?.events as { seqNo: number; eventType: string }[]).map((e) => [e.seqNo, e.eventType]),
    ).toEqual([
      [0, 'Started'],
      [1, 'Updated'],
      [2, 'Ended'],
    ]);
    // Kept in a compact row (codes, ms), answered as the text the charger sent.
    const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
    expect(record?.events).toEqual(
      ['RemoteStart', 'MeterValuePeriodic', 'StopAuthorized'].map((triggerReason, seqNo) => ({
        seqNo,
        eventType: ['Started', 'Updated', 'Ended'][seqNo],
        triggerReason,
        offline: false,
        timestamp: expect.stringMatching(iso),
        receivedAt: expect.stringMatching(iso),
      })),
    );
    ledgerVerifies();
  });

  it('an offline queue replayed with its Ended first still settles once on the registers it carries', async () => {
    const s = await station('CP-1');
    await boot(s.cp);
    const { sessionId, remote } = await paidSession(s, '2');
    const transactionId = randomUUID();
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
    // Ended comes first and names no token: only the remoteStartId ties it to the session.
    await s.cp.call(
      'TransactionEvent',
      txEvent({
        eventType: 'Ended',
        seqNo: 2,
        transactionId,
        offline: true,
        timestamp: hoursAgo(1),
        triggerReason: 'EVDeparted',
        stoppedReason: 'EVDisconnected',
        evseId: 2,
        meterValue: [
          {
            timestamp: hoursAgo(3),
            sampledValue: [
              { value: 50, context: 'Transaction.Begin', unitOfMeasure: { unit: 'kWh' } },
            ],
          },
          {
            timestamp: hoursAgo(1),
            sampledValue: [
              {
                value: 51.2,
                context: 'Transaction.End',
                unitOfMeasure: { unit: 'Wh', multiplier: 3 },
              },
            ],
          },
        ],
      }),
    );
    expect(session(sessionId).state).toBe('authorized');
    const late = await s.cp.call(
      'TransactionEvent',
      txEvent({
        eventType: 'Started',
        seqNo: 0,
        transactionId,
        offline: true,
        timestamp: hoursAgo(3),
        triggerReason: 'RemoteStart',
        remoteStartId: remote.remoteStartId,
        evseId: 2,
      }),
    );
    expect(late).toEqual({});
    await s.cp.call(
      'TransactionEvent',
      txEvent({
        eventType: 'Updated',
        seqNo: 1,
        transactionId,
        offline: true,
        timestamp: hoursAgo(2),
        meterValue: register(50_600),
      }),
    );
    expect(session(sessionId)).toMatchObject({
      state: 'settled',
      meter_start_wh: 50_000,
      delivered_wh: 1_200,
      end_reason: 'EVDisconnected',
    });
    expect(outcomes(sessionId).n).toBe(1);
    ledgerVerifies();
  });

  it('a transaction the charger started at cable plug-in becomes the session it answers the remote start with', async () => {
    const s = await station('CP-1');
    await boot(s.cp);
    const transactionId = randomUUID();
    expect(
      await s.cp.call(
        'TransactionEvent',
        txEvent({
          eventType: 'Started',
          seqNo: 0,
          transactionId,
          triggerReason: 'CablePluggedIn',
          chargingState: 'EVConnected',
          evseId: 1,
          meterValue: register(7_000, 'Transaction.Begin'),
        }),
      ),
    ).toEqual({});
    s.replyToStart({ status: 'Accepted', transactionId });
    const { sessionId, remote } = await paidSession(s, '1');
    s.replyToStart({ status: 'Accepted' });
    expect(session(sessionId)).toMatchObject({
      state: 'charging',
      transaction_ref: transactionId,
      meter_start_wh: 7_000,
    });
    expect(
      await s.cp.call(
        'TransactionEvent',
        txEvent({
          eventType: 'Updated',
          seqNo: 1,
          transactionId,
          triggerReason: 'RemoteStart',
          idToken: remote.idToken.idToken,
          chargingState: 'Charging',
          meterValue: register(7_000),
        }),
      ),
    ).toEqual({ idTokenInfo: { status: 'Accepted' } });
    await s.cp.call(
      'TransactionEvent',
      txEvent({
        eventType: 'Ended',
        seqNo: 2,
        transactionId,
        triggerReason: 'StopAuthorized',
        meterValue: register(7_900, 'Transaction.End'),
      }),
    );
    expect(session(sessionId)).toMatchObject({
      state: 'settled',
      delivered_wh: 900,
      end_reason: 'Local',
    });
    ledgerVerifies();
  });

  it('stops at the paid energy with RequestStopTransaction naming the charger’s transaction id', async () => {
    const s = await station('CP-1');
    await boot(s.cp);
    const { sessionId, remote } = await paidSession(s, '1');
    const transactionId = await remoteStarted(s.cp, remote, 0);
    // 2,500 Wh is past the paid 2,424 Wh.
    await s.cp.call(
      'TransactionEvent',
      txEvent({ eventType: 'Updated', seqNo: 1, transactionId, meterValue: register(2_500) }),
    );
    await waitUntil(() => s.stops.includes(transactionId), 5000, 'RequestStopTransaction');
    expect(session(sessionId).state).toBe('stopping');
    await s.cp.call(
      'TransactionEvent',
      txEvent({
        eventType: 'Ended',
        seqNo: 2,
        transactionId,
        triggerReason: 'RemoteStop',
        stoppedReason: 'Remote',
        meterValue: register(2_510, 'Transaction.End'),
      }),
    );
    // Overshoot is never charged: the cost is capped at what was paid.
    expect(session(sessionId)).toMatchObject({ state: 'settled', cost: 1_000, credited: 0 });
    ledgerVerifies();
  });

  it('a station that sends every TransactionEvent twice is started once and settled once', async () => {
    const cp = new ChargePoint201({
      url: t.gw.ocppUrl,
      identity: 'CP-1',
      password: CHARGER_PASSWORD,
      connectors: 2,
      maxPowerW: 150_000,
      timeFactor: 120,
      duplicateTransactionEvents: true,
    });
    await cp.connect();
    try {
      await cp.plugIn(1, IONIQ);
      const started = cp.waitFor('transactionStarted', (e) => e.connectorId === 1);
      const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
      const res = await startSession(
        t.gw.url,
        token,
        { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
        5_000,
      );
      expect(res.status).toBe(200);
      const { sessionId } = res.body as { sessionId: string };
      const tx = await started;
      await cp.waitFor('meterValues', (m) => m.transactionId === tx.transactionId);
      const stopped = cp.waitFor('transactionStopped');
      await cp.interrupt(1, 'Local');
      const stop = await stopped;
      const s = await waitUntil(
        () => (session(sessionId).state === 'settled' ? session(sessionId) : undefined),
        5000,
        'settlement',
      );
      expect(s.delivered_wh).toBe(stop.meterStop - tx.meterStart);
      expect(outcomes(sessionId).n).toBe(1);
      expect(notes('CP-1')).toContain('TransactionEvent: repeated event answered again');
      ledgerVerifies();
    } finally {
      await cp.disconnect();
    }
  });
});
