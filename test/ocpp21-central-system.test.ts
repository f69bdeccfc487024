import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ChargerLocalAuthorization } from '../src/ocpp/port.js';
import { SessionReads } from '../src/operator/read-model/sessions.js';
import { DRIVERS } from './helpers/gateway.js';
import { createOperator, op } from './helpers/operator.js';
import { rawCharger } from './helpers/raw-charger.js';
import { acceptVariables, raw21, type RawStation } from './helpers/raw-stations.js';
import { chargeUntilStopped, cost, LIMIT_WH } from './helpers/session-harness.js';
import { checkSentFrames, noFrames, type SentFrames } from './helpers/strict21.js';
import { costOf, TAP, tapSite } from './helpers/tap-site.js';
import { uploadFirmware } from './helpers/transfers.js';
import { waitUntil } from './helpers/wait.js';

/**
 * An OCPP 2.1 station (a raw-frame one, helpers/raw-stations.ts) on every path a 2.0.1 station
 * takes, and the calls 2.1 added; every frame the gateway sends it is checked against 2.1's own
 * schemas (helpers/strict21.ts), and the gateway logs no answer of its own it had to refuse.
 */

const site = tapSite();
const { h, bindAll, balance, tapSessions, debits, ledgerClean, tap, endAndSettle } = site;
const db = () => h.t.gw.db;
const now = () => new Date().toISOString();

/** What the station was asked, by action, with the parameters. */
type Asked = Map<string, unknown[]>;

/** Station answers that are valid 2.1, so the gateway reads each as a charger would answer. */
function answering(station: RawStation, asked: Asked): void {
  const variables = new Map<string, string>([
    ['SmartChargingCtrlr.RateUnit', 'W'],
    ['LocalAuthListCtrlr.Enabled', 'false'],
    // A screen (DisplayMessageCtrlr) and cost in its answers (TariffCostCtrlr, any instance).
    ['DisplayMessageCtrlr.Enabled', 'true'],
    ['TariffCostCtrlr.Enabled', 'true'],
  ]);
  const answer = (action: string, reply: (params: unknown) => Record<string, unknown>) =>
    station.cp.handle(action, async ({ params }) => {
      asked.set(action, [...(asked.get(action) ?? []), params]);
      return reply(params);
    });
  answer('GetVariables', (params) => ({
    getVariableResult: (
      params as { getVariableData: { component: { name: string }; variable: { name: string } }[] }
    ).getVariableData.map((d) => {
      const value = variables.get(`${d.component.name}.${d.variable.name}`);
      return {
        attributeStatus: value === undefined ? 'UnknownVariable' : 'Accepted',
        ...(value !== undefined && { attributeValue: value }),
        component: d.component,
        variable: d.variable,
      };
    }),
  }));
  for (const action of [
    'Reset',
    'ChangeAvailability',
    'TriggerMessage',
    'UpdateFirmware',
    'SetChargingProfile',
    'ClearChargingProfile',
  ])
    answer(action, () => ({ status: 'Accepted' }));
  answer('SetVariables', acceptVariables);
  answer('UnlockConnector', () => ({ status: 'Unlocked' }));
  answer('SendLocalList', () => ({ status: 'Accepted' }));
  answer('CostUpdated', () => ({}));
  answer('SetDisplayMessage', () => ({ status: 'Accepted' }));
  answer('GetLocalListVersion', () => ({ versionNumber: 0 }));
  answer('GetLog', () => ({ status: 'Accepted', filename: 'diagnostics.log' }));
}

interface Connected {
  station: RawStation;
  sent: SentFrames;
  asked: Asked;
}

/** A booted 2.1 station on `chargerId`, every frame the gateway sends it checked. */
async function connected21(chargerId = 'CP-1'): Promise<Connected> {
  const station = await raw21.connect(h.t.gw.ocppUrl, chargerId);
  h.track(station);
  const sent = noFrames();
  const asked: Asked = new Map();
  checkSentFrames(station.cp, sent);
  answering(station, asked);
  expect(station.cp.protocol).toBe('ocpp2.1');
  await station.boot();
  return { station, sent, asked };
}

/** The gateway refused none of its own answers (edge.ts ourMistake) and sent no invalid frame. */
function allValid(sent: SentFrames): void {
  expect(sent.problems).toEqual([]);
  expect(h.t.logLines.filter((l) => l.includes('InternalError sent'))).toEqual([]);
}

const notes = (chargerId: string, action: string) =>
  (
    db()
      .prepare('SELECT note FROM ocpp_events WHERE charger_id = ? AND action = ? ORDER BY seq')
      .all(chargerId, action) as { note: string }[]
  ).map((e) => e.note);

let operator = '';
const asOperator = (method: string, path: string, body?: unknown) => {
  operator ||= createOperator(db(), 'otto-21', 'operator');
  return op(h.t.gw.operatorUrl, operator, method, path, body);
};

describe('OCPP 2.1 station', () => {
  it('an app session: remote start, samples, the gateway’s stop at the paid energy, Ended, settled', async () => {
    const { station, sent, asked } = await connected21();
    // Boot: the same sampling variables as 2.0.1, read first.
    await waitUntil(() => asked.has('GetVariables'), 5000, 'GetVariables');
    const start = balance(DRIVERS.ada.id);
    const sessionId = await h.appSession();
    expect(sent.calls).toContain('RequestStartTransaction');
    const { tx, reply } = await station.start(10_000);
    expect(reply).toMatchObject({ idTokenInfo: { status: 'Accepted' } });
    expect(h.session(sessionId).state).toBe('charging');
    // The driver is told at the station's screen what was paid.
    await waitUntil(() => asked.has('SetDisplayMessage'), 5000, 'SetDisplayMessage');
    const stoppedAt = await chargeUntilStopped(station, tx, 10_000, 10_000 + LIMIT_WH + 1_000);
    expect(station.stops).toEqual([tx.ref]);
    expect(stoppedAt - 10_000).toBeGreaterThanOrEqual(LIMIT_WH);
    await station.send(station.end(tx, stoppedAt, { reason: 'Remote' }));
    const settled = await h.settled(sessionId);
    expect(settled.delivered_wh).toBe(stoppedAt - 10_000);
    expect(settled.cost).toBe(cost(stoppedAt - 10_000));
    expect(balance(DRIVERS.ada.id)).toBe(start - cost(stoppedAt - 10_000));
    ledgerClean();
    // The operator's record says which protocol the charger spoke.
    expect(new SessionReads(db()).transaction(sessionId)).toMatchObject({
      protocol: 'ocpp2.1',
      transactionId: tx.ref,
    });
    // What was checked: the calls the gateway made and its answers to the station's.
    expect(sent.calls).toEqual(
      expect.arrayContaining(['GetVariables', 'SetVariables', 'SetDisplayMessage']),
    );
    expect(sent.answered).toEqual(
      expect.arrayContaining(['BootNotification', 'StatusNotification', 'TransactionEvent']),
    );
    allValid(sent);
  });

  it('a bound card tapped at the station opens a paid session and settles it from the wallet', async () => {
    bindAll();
    const { station, sent } = await connected21();
    const start = balance(DRIVERS.ada.id);
    const { tx, status } = await tap(station, '04A23B1C5D6E70', 1);
    expect(status).toBe('Accepted');
    const [s] = tapSessions().filter((r) => r.state === 'charging');
    expect(s).toMatchObject({ origin: 'card', amount: TAP, driver_id: DRIVERS.ada.id });
    expect(debits(s!.id)).toBe(1);
    await station.send(station.sample(tx, 11_000));
    const settled = await endAndSettle(station, tx, 11_500, s!.id);
    expect(settled).toMatchObject({ cost: costOf(1_500), credited: TAP - costOf(1_500) });
    expect(balance(DRIVERS.ada.id)).toBe(start - costOf(1_500));
    ledgerClean();
    allValid(sent);
  });

  it('every operator operation, a firmware update and a log request', async () => {
    const { station, sent, asked } = await connected21('CP-AC');
    const send = (frame: { action: string; params: Record<string, unknown> }) =>
      station.send(frame);
    const ok = async (method: string, path: string, body?: unknown) => {
      const res = await asOperator(method, path, body);
      expect([path, res.status, res.body]).toMatchObject([path, 200, {}]);
      return res.body as Record<string, unknown>;
    };
    await ok('POST', '/chargers/CP-AC/reset', { type: 'soft' });
    await ok('POST', '/chargers/CP-AC/reset', { type: 'hard' });
    await ok('POST', '/chargers/CP-AC/connectors/1/unlock');
    await ok('POST', '/chargers/CP-AC/connectors/1/availability', { operative: false });
    await ok('POST', '/chargers/CP-AC/availability', { operative: true });
    await ok('POST', '/chargers/CP-AC/trigger', { message: 'status', connectorId: '1' });
    await ok('POST', '/chargers/CP-AC/trigger', { message: 'meter' });
    await ok('GET', '/chargers/CP-AC/config?keys=SmartChargingCtrlr.RateUnit');
    await ok('PUT', '/chargers/CP-AC/config', {
      name: 'OCPPCommCtrlr.HeartbeatInterval',
      value: '300',
    });
    expect(asked.get('Reset')).toEqual([{ type: 'OnIdle' }, { type: 'Immediate' }]);
    expect(asked.get('UnlockConnector')).toEqual([{ evseId: 1, connectorId: 1 }]);
    // The basic-auth password (security profile 1), set on CP-OFF so the others keep theirs.
    const off = await connected21('CP-OFF');
    const password = await ok('POST', '/chargers/CP-OFF/password', {
      password: 'a-2.1-station-password-0001',
      overlapSeconds: 600,
      setOnCharger: true,
    });
    expect(password).toMatchObject({ charger: { accepted: true } });
    expect(off.asked.get('SetVariables')).toContainEqual({
      setVariableData: [
        {
          component: { name: 'SecurityCtrlr' },
          variable: { name: 'BasicAuthPassword' },
          attributeValue: 'a-2.1-station-password-0001',
        },
      ],
    });
    // It took: the station connects with it.
    const again = await rawCharger(h.t.gw.ocppUrl, 'CP-OFF', 'a-2.1-station-password-0001', [
      'ocpp2.1',
    ]);
    await again.close({ force: true });
    allValid(off.sent);

    const firmware = await uploadFirmware(
      h.t.gw.operatorUrl,
      operator,
      'fw-21.bin',
      Buffer.alloc(2_000, 5),
    );
    expect(firmware.status).toBe(201);
    const update = await ok('POST', '/chargers/CP-AC/firmware-update', {
      fileId: firmware.body.fileId,
    });
    const firmwareJob = (update.job as { jobId: number }).jobId;
    const { requestId, firmware: fw } = asked.get('UpdateFirmware')?.[0] as {
      requestId: number;
      firmware: { location: string };
    };
    expect(fw.location).toMatch(/\/transfers\/firmware\/.+\/fw-21\.bin$/);
    for (const status of ['Downloading', 'Downloaded', 'Installing', 'Installed'])
      await send({ action: 'FirmwareStatusNotification', params: { status, requestId } });
    const log = await ok('POST', '/chargers/CP-AC/log-request');
    const logRequest = asked.get('GetLog')?.[0] as { requestId: number; logType: string };
    expect(logRequest.logType).toBe('DiagnosticsLog');
    await send({
      action: 'LogStatusNotification',
      params: { status: 'Uploading', requestId: logRequest.requestId },
    });
    const jobStatus = async (jobId: number) =>
      ((await asOperator('GET', `/transfer-jobs/${jobId}`)).body as { job: { status: string } }).job
        .status;
    await waitUntil(async () => (await jobStatus(firmwareJob)) === 'Installed', 5000, 'Installed');
    expect(await jobStatus((log.job as { jobId: number }).jobId)).toBe('Uploading');
    expect(sent.calls).toEqual(
      expect.arrayContaining([
        'Reset',
        'UnlockConnector',
        'ChangeAvailability',
        'TriggerMessage',
        'GetVariables',
        'SetVariables',
        'UpdateFirmware',
        'GetLog',
      ]),
    );
    allValid(sent);
  });

  it('a local list takes 2.1’s longer tokens (255 characters, 2.0.1: 36)', async () => {
    const { sent, asked } = await connected21();
    // The port the local-list sync uses (charging/local-lists), on the same calls object.
    const chargers = h.t.gw.chargers as typeof h.t.gw.chargers & ChargerLocalAuthorization;
    const capability = await chargers.prepareLocalAuthorization('CP-1', {
      listEnabled: true,
      offlineStarts: false,
    });
    expect(capability).toMatchObject({ listSupported: true, maxTokenLength: 255 });
    // A 64-character token (the longest a driver's token may be) goes in the list as it is.
    const long = 'C'.repeat(64);
    const put = [{ value: long, type: 'ISO14443', status: 'accepted' as const, expiresAt: null }];
    expect(
      await chargers.sendLocalList('CP-1', { kind: 'full', version: 1, put, remove: [] }),
    ).toBe('accepted');
    expect(asked.get('SendLocalList')).toEqual([
      {
        versionNumber: 1,
        updateType: 'Full',
        localAuthorizationList: [
          { idToken: { idToken: long, type: 'ISO14443' }, idTokenInfo: { status: 'Accepted' } },
        ],
      },
    ]);
    allValid(sent);
  });

  it('site power’s ceilings and the paid-energy zero profile go out as 2.1 charging profiles', async () => {
    const { station, sent, asked } = await connected21();
    await waitUntil(() => asked.has('GetVariables'), 5000, 'GetVariables');
    const chargers = h.t.gw.chargers;
    expect(await chargers.setPowerLimit('CP-1', '2', { watts: 11_000 })).toBe('accepted');
    const sessionId = await h.appSession();
    const { tx } = await station.start(10_000);
    expect(
      await chargers.setPowerLimit('CP-1', '1', {
        watts: 7_000,
        transactionRef: tx.ref,
      }),
    ).toBe('accepted');
    expect(await chargers.limitToZero('CP-1', '1', tx.ref)).toBe('accepted');
    expect(await chargers.setPowerLimit('CP-1', '2', { watts: null })).toBe('accepted');
    const profiles = (asked.get('SetChargingProfile') ?? []) as {
      evseId: number;
      chargingProfile: {
        chargingProfilePurpose: string;
        transactionId?: string;
        chargingSchedule: { chargingRateUnit: string; chargingSchedulePeriod: unknown[] }[];
      };
    }[];
    expect(
      profiles.map((p) => [
        p.evseId,
        p.chargingProfile.chargingProfilePurpose,
        p.chargingProfile.transactionId ?? null,
        p.chargingProfile.chargingSchedule[0]?.chargingSchedulePeriod,
      ]),
    ).toEqual([
      [2, 'TxDefaultProfile', null, [{ startPeriod: 0, limit: 11_000, numberPhases: 3 }]],
      [1, 'TxProfile', tx.ref, [{ startPeriod: 0, limit: 7_000, numberPhases: 3 }]],
      [1, 'TxProfile', tx.ref, [{ startPeriod: 0, limit: 0 }]],
    ]);
    expect(asked.get('ClearChargingProfile')).toHaveLength(1);
    await station.send(station.end(tx, 10_500));
    await h.settled(sessionId);
    allValid(sent);
  });

  it('answers every call 2.1 added, records each, and alerts a payment-terminal settlement without billing it', async () => {
    const { station, sent } = await connected21('CP-AC');
    const ledgerRows = () =>
      (db().prepare('SELECT count(*) AS n FROM ledger_entries').get() as { n: number }).n;
    const before = ledgerRows();
    const call = (action: string, params: Record<string, unknown>) =>
      station.send({ action, params });
    const transactionId = randomUUID();
    expect(
      await call('NotifySettlement', {
        transactionId,
        pspRef: 'psp-0001',
        status: 'Settled',
        settlementAmount: 4_500,
        settlementTime: now(),
      }),
    ).toEqual({});
    expect(await call('NotifyPriorityCharging', { transactionId, activated: true })).toEqual({});
    expect(
      await call('NotifyAllowedEnergyTransfer', {
        transactionId,
        allowedEnergyTransfer: ['DC'],
      }),
    ).toEqual({ status: 'Accepted' });
    expect(await call('PullDynamicScheduleUpdate', { chargingProfileId: 7 })).toEqual({
      status: 'Rejected',
    });
    expect(
      await call('NotifyDERAlarm', {
        controlType: 'HVMustTrip',
        gridEventFault: 'OverVoltage',
        timestamp: now(),
      }),
    ).toEqual({});
    expect(
      await call('NotifyDERStartStop', { controlId: 'der-1', started: true, timestamp: now() }),
    ).toEqual({});
    expect(await call('ReportDERControl', { requestId: 3 })).toEqual({});
    expect(
      await call('BatterySwap', {
        eventType: 'BatteryIn',
        requestId: 1,
        idToken: { idToken: 'SWAP-CARD', type: 'ISO14443' },
        batteryData: [{ evseId: 1, serialNumber: 'B-1', soC: 80, soH: 95 }],
      }),
    ).toEqual({});
    expect(await call('NotifyWebPaymentStarted', { evseId: 1, timeout: 60 })).toEqual({});
    expect(await call('VatNumberValidation', { vatNumber: 'NG-12345', evseId: 1 })).toEqual({
      vatNumber: 'NG-12345',
      evseId: 1,
      status: 'Rejected',
      statusInfo: { reasonCode: 'NotSupported' },
    });
    expect(
      await call('OpenPeriodicEventStream', {
        constantStreamData: { id: 1, variableMonitoringId: 2, params: { interval: 10 } },
      }),
    ).toMatchObject({ status: 'Rejected' });
    expect(await call('ClosePeriodicEventStream', { id: 1 })).toEqual({});
    for (const action of [
      'NotifyPriorityCharging',
      'NotifyAllowedEnergyTransfer',
      'PullDynamicScheduleUpdate',
      'NotifyDERAlarm',
      'NotifyDERStartStop',
      'ReportDERControl',
      'BatterySwap',
      'NotifyWebPaymentStarted',
      'VatNumberValidation',
      'OpenPeriodicEventStream',
      'ClosePeriodicEventStream',
    ])
      expect([action, notes('CP-AC', action).length]).toEqual([action, 1]);
    expect(notes('CP-AC', 'NotifySettlement')).toEqual(['Settled 4500: not billed']);
    // Recorded and alerted, never billed: no ledger entry, an alert an operator acknowledges.
    expect(ledgerRows()).toBe(before);
    const alert = db()
      .prepare("SELECT subject, detail FROM alerts WHERE kind = 'station_payment'")
      .get() as { subject: string; detail: string };
    expect(alert.subject).toBe('CP-AC/psp-0001');
    expect(JSON.parse(alert.detail)).toMatchObject({
      chargerId: 'CP-AC',
      amount: 4_500,
      status: 'Settled',
      transactionId,
    });
    allValid(sent);
  });

  it('a connector’s AvailabilityState in a NotifyEvent is its status; another case is read and counted', async () => {
    const { station, sent } = await connected21();
    const state = (connectorId: string) =>
      (
        db()
          .prepare(
            "SELECT status FROM connector_state WHERE charger_id = 'CP-1' AND connector_id = ?",
          )
          .get(connectorId) as { status: string }
      ).status;
    const availability = (value: string, component: Record<string, unknown>) => ({
      action: 'NotifyEvent',
      params: {
        generatedAt: now(),
        seqNo: 0,
        eventData: [
          {
            eventId: 1,
            timestamp: now(),
            trigger: 'Delta',
            actualValue: value,
            eventNotificationType: 'HardWiredNotification',
            component,
            variable: { name: 'AvailabilityState' },
          },
        ],
      },
    });
    await station.send(
      availability('Faulted', { name: 'Connector', evse: { id: 2, connectorId: 1 } }),
    );
    expect(state('2')).toBe('faulted');
    await station.send(availability('available', { name: 'EVSE', evse: { id: 2 } }));
    expect(state('2')).toBe('available');
    await station.send(availability('Sideways', { name: 'Connector', evse: { id: 2 } }));
    expect(state('2')).toBe('available');
    expect(notes('CP-1', 'NotifyEvent')).toContain('unknown AvailabilityState Sideways');
    const deviations = db()
      .prepare("SELECT kind FROM charger_deviations WHERE charger_id = 'CP-1'")
      .all() as { kind: string }[];
    expect(deviations.map((d) => d.kind)).toContain(
      'NotifyEvent eventData[].actualValue availability_case',
    );
    allValid(sent);
  });

  it('a NotifyPeriodicEventStream SEND frame is counted and kept; ocpp-rpc answers it with a CALLERROR', async () => {
    const { station, sent } = await connected21('CP-AC');
    station.cp.sendRaw(
      JSON.stringify([
        6,
        'send-1',
        'NotifyPeriodicEventStream',
        { id: 1, pending: 0, basetime: now(), data: [{ t: 0, v: '1' }] },
      ]),
    );
    await waitUntil(
      () => notes('CP-AC', 'NotifyPeriodicEventStream').length === 1,
      5000,
      'the SEND kept',
    );
    const counted = db()
      .prepare(
        "SELECT count FROM charger_deviations WHERE charger_id = 'CP-AC' AND kind = 'NotifyPeriodicEventStream SEND message_type_not_supported'",
      )
      .get() as { count: number };
    expect(counted.count).toBe(1);
    await waitUntil(() => sent.problems.length === 1, 5000, 'the CALLERROR');
    // ocpp-rpc refuses the frame before it reads its id: its CALLERROR names message id -1.
    expect(sent.problems[0]).toMatch(/^CALLERROR to -1: \["MessageTypeNotSupported"/);
  });
});
