import { spawn } from 'node:child_process';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ChargePoint16 } from '../simulators/ocpp16/charge-point.js';
import { ChargePoint201 } from '../simulators/ocpp201/charge-point.js';
import type {
  ChargePoint201Options,
  ChargePointEventName,
  ChargePointEventPayload,
  VehicleSpec,
} from '../simulators/ocpp201/charge-point.js';
import type { SampledValue, TransactionEventRequest } from '../simulators/ocpp201/ocpp-types.js';
import type { IncomingCalls } from '../simulators/ocpp201/ocpp-messages.js';
import type { SimulatedChargePoint } from '../simulators/shared/simulated-charge-point.js';
import { CHARGING_EFFICIENCY } from '../simulators/shared/vehicle-physics.js';
import { FakeCsms } from './helpers/fake-csms201.js';
import { buildSimulatorsIfStale, simulatorCli } from './helpers/simulator-build.js';
import { waitUntil } from './helpers/wait.js';

const PASSWORD = 'sim-secret-201';
const TIME_FACTOR = 600;
// The sampling-rate test measures wall time: 30 simulated s are 250 ms here (50 ms at
// TIME_FACTOR), so a loaded machine's scheduling stalls stay small against the interval.
const SAMPLING_TIME_FACTOR = 120;
const IONIQ: VehicleSpec = {
  model: 'Hyundai Ioniq 5',
  batteryKwh: 77.4,
  socPercent: 35,
  maxPowerW: 150_000,
};

function sample(values: SampledValue[], measurand: string): SampledValue | undefined {
  return values.find((value) => (value.measurand ?? 'Energy.Active.Import.Register') === measurand);
}

function register(event: TransactionEventRequest | undefined): number | undefined {
  return sample(event?.meterValue?.[0]?.sampledValue ?? [], 'Energy.Active.Import.Register')?.value;
}

/** Collects events as they happen, so a test can wait for the n-th without racing. */
function collect<K extends ChargePointEventName>(
  cp: ChargePoint201,
  event: K,
  predicate: (payload: ChargePointEventPayload<K>) => boolean,
) {
  const items: { payload: ChargePointEventPayload<K> }[] = [];
  cp.on(event, (payload) => {
    if (predicate(payload)) items.push({ payload });
  });
  return {
    items,
    untilCount: (count: number, timeoutMs = 5_000) =>
      waitUntil(() => items.length >= count, timeoutMs, `${count} ${event} events`),
  };
}

let cs: FakeCsms;
let chargePoints: ChargePoint201[] = [];
let warnings: unknown[] = [];
let nextRemoteStartId = 1;

async function startChargePoint(
  overrides: Partial<ChargePoint201Options> = {},
): Promise<ChargePoint201> {
  const cp = new ChargePoint201({
    url: cs.url,
    identity: 'CS-1',
    password: PASSWORD,
    connectors: 2,
    timeFactor: TIME_FACTOR,
    ...overrides,
  });
  chargePoints.push(cp);
  cp.on('warning', ({ error }) => warnings.push(error));
  await cp.connect();
  return cp;
}

function requestStart(idTag: string, evseId: number | undefined = 1) {
  return cs.call('CS-1', 'RequestStartTransaction', {
    ...(evseId === undefined ? {} : { evseId }),
    remoteStartId: nextRemoteStartId++,
    idToken: { idToken: idTag, type: 'Central' },
  });
}

async function startCharging(cp: ChargePoint201, idTag = 'DRIVER-0001') {
  const started = cp.waitFor('transactionStarted', (event) => event.connectorId === 1);
  await cp.plugIn(1, IONIQ);
  const conf = await requestStart(idTag);
  expect(conf.status).toBe('Accepted');
  return started;
}

/**
 * Turns the periodic samples off (by default every 60 simulated s, i.e. 100 ms of wall time), so
 * a test that expects an exact TransactionEvent sequence does not race them on a busy machine.
 */
async function withoutPeriodicSamples(): Promise<void> {
  const set = await cs.setVariables('CS-1', [['SampledDataCtrlr', 'TxUpdatedInterval', '0']]);
  expect(set).toEqual(['Accepted']);
}

function isRefusal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'rpcErrorCode' in error;
}

beforeEach(async () => {
  cs = await new FakeCsms('ocpp2.0.1', PASSWORD).listen();
});

afterEach(async () => {
  for (const cp of chargePoints) await cp.disconnect();
  chargePoints = [];
  await cs.close();
  expect(cs.validationFailures).toEqual([]);
  // A CALLERROR from either side would mean a message failed strict validation.
  expect(warnings.filter(isRefusal)).toEqual([]);
  warnings = [];
});

describe('ChargePoint201 against a bare OCPP 2.0.1 CSMS', () => {
  it('boots with reason PowerUp, then reports every EVSE Available', async () => {
    const cp = await startChargePoint({ vendor: 'Acme Power Systems GmbH', model: 'DC-150' });
    const [boot] = cs.messages('BootNotification');
    expect(boot).toEqual({
      reason: 'PowerUp',
      chargingStation: {
        vendorName: 'Acme Power Systems GmbH',
        model: 'DC-150',
        serialNumber: 'CS-1',
        firmwareVersion: '1.0.0-sim',
      },
    });
    const statuses = cs.messages('StatusNotification');
    expect(statuses.map((s) => [s.evseId, s.connectorId, s.connectorStatus])).toEqual([
      [1, 1, 'Available'],
      [2, 1, 'Available'],
    ]);
    expect(cp.isBooted).toBe(true);
    expect(cp.heartbeatIntervalSeconds).toBe(300);
  });

  it('retries the boot after the interval while the CSMS answers Pending', async () => {
    cs.bootReplies.push('Pending', 'Pending');
    cs.heartbeatInterval = 10;
    await startChargePoint();
    expect(cs.messages('BootNotification')).toHaveLength(3);
    expect(cs.messages('StatusNotification')).toHaveLength(2);
  });

  it('is refused with a wrong password', async () => {
    await expect(startChargePoint({ password: 'wrong' })).rejects.toThrow();
    expect(cs.received).toEqual([]);
  });

  it('reports Occupied, the ISO 15118 charging needs and the SoC on plug-in', async () => {
    const cp = await startChargePoint({ meterStartWh: 2_000_000 });
    await cp.plugIn(1, IONIQ);
    const occupied = await cs.waitForMessage('StatusNotification', (s) => s.evseId === 1, 5_000, 2);
    expect(occupied.connectorStatus).toBe('Occupied');
    const [needs] = cs.messages('NotifyEVChargingNeeds');
    expect(needs).toEqual({
      evseId: 1,
      chargingNeeds: {
        requestedEnergyTransfer: 'DC',
        dcChargingParameters: {
          evMaxCurrent: expect.any(Number),
          evMaxVoltage: expect.any(Number),
          evMaxPower: 150_000,
          evEnergyCapacity: 77_400,
          stateOfCharge: 35,
          energyAmount: 50_310,
        },
      },
    });
    const dc = needs?.chargingNeeds.dcChargingParameters;
    expect(dc?.evMaxVoltage).toBeGreaterThan(350);
    expect(dc?.evMaxCurrent).toBeGreaterThan(300);
    const [meter] = cs.messages('MeterValues');
    expect(meter?.evseId).toBe(1);
    const values = meter?.meterValue[0]?.sampledValue ?? [];
    expect(sample(values, 'SoC')).toEqual({
      value: 35,
      measurand: 'SoC',
      unitOfMeasure: { unit: 'Percent' },
      context: 'Sample.Periodic',
      location: 'EV',
    });
    expect(sample(values, 'Energy.Active.Import.Register')).toMatchObject({
      value: 2_000_000,
      unitOfMeasure: { unit: 'Wh' },
    });
    expect(cs.messages('TransactionEvent')).toEqual([]);
    expect(cp.state(1)).toMatchObject({ status: 'Occupied', plugged: true });
  });

  it('starts on RequestStartTransaction with idToken, remoteStartId and the meter start', async () => {
    const cp = await startChargePoint();
    const remoteStart = cp.waitFor('remoteStart');
    const started = await startCharging(cp, 'FLEET-DRIVER-42');
    expect(await remoteStart).toEqual({
      connectorId: 1,
      idTag: 'FLEET-DRIVER-42',
      status: 'Accepted',
    });
    expect(started).toEqual({
      connectorId: 1,
      transactionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      idTag: 'FLEET-DRIVER-42',
      meterStart: 1_000_000,
    });
    const [event] = cs.transactionEvents();
    expect(event).toMatchObject({
      eventType: 'Started',
      triggerReason: 'RemoteStart',
      seqNo: 0,
      transactionInfo: {
        transactionId: started.transactionId,
        chargingState: 'Charging',
        remoteStartId: nextRemoteStartId - 1,
      },
      idToken: { idToken: 'FLEET-DRIVER-42', type: 'Central' },
      evse: { id: 1, connectorId: 1 },
    });
    expect(event?.offline).toBeUndefined();
    const values = event?.meterValue?.[0]?.sampledValue ?? [];
    expect(values).toEqual([
      {
        value: 1_000_000,
        context: 'Transaction.Begin',
        measurand: 'Energy.Active.Import.Register',
        unitOfMeasure: { unit: 'Wh' },
      },
      {
        value: 35,
        context: 'Transaction.Begin',
        measurand: 'SoC',
        unitOfMeasure: { unit: 'Percent' },
        location: 'EV',
      },
    ]);
    expect(cp.state(1)).toMatchObject({
      status: 'Occupied',
      transactionId: started.transactionId,
      idTag: 'FLEET-DRIVER-42',
    });
  });

  it('rejects remote starts when configured to, and on a Faulted EVSE', async () => {
    const cp = await startChargePoint();
    await cp.setStatus(2, 'Faulted', 'GroundFailure');
    await cs.waitForMessage('StatusNotification', (s) => s.connectorStatus === 'Faulted');
    const [problem] = cs.messages('NotifyEvent');
    expect(problem?.eventData).toMatchObject([
      {
        actualValue: 'true',
        techInfo: 'GroundFailure',
        component: { name: 'Connector', evse: { id: 2, connectorId: 1 } },
        variable: { name: 'Problem' },
      },
    ]);
    expect(cp.state(2)).toMatchObject({ status: 'Faulted', errorCode: 'GroundFailure' });
    expect((await requestStart('X', 2)).status).toBe('Rejected');
    expect((await requestStart('Y', 1)).status).toBe('Accepted');
    await cp.setStatus(2, 'Available');
    await cs.waitForMessage('NotifyEvent', (n) => n.eventData[0]?.cleared === true);

    const picky = new ChargePoint201({
      url: cs.url,
      identity: 'CS-2',
      password: PASSWORD,
      connectors: 1,
      timeFactor: TIME_FACTOR,
      remoteStart: 'reject',
    });
    chargePoints.push(picky);
    await picky.connect();
    await picky.plugIn(1, IONIQ);
    const conf = await cs.call('CS-2', 'RequestStartTransaction', {
      evseId: 1,
      remoteStartId: 7,
      idToken: { idToken: 'Z', type: 'Central' },
    });
    expect(conf.status).toBe('Rejected');
    expect(cs.transactionEvents()).toEqual([]);
  });

  it('never answers when told to ignore remote starts, so the CSMS times out', async () => {
    const cp = await startChargePoint({ remoteStart: 'ignore' });
    const seen = cp.waitFor('remoteStart');
    await expect(
      cs.call(
        'CS-1',
        'RequestStartTransaction',
        { evseId: 1, remoteStartId: 1, idToken: { idToken: 'X', type: 'Central' } },
        200,
      ),
    ).rejects.toThrow(/timeout/i);
    expect((await seen).status).toBe('Ignored');
  });

  it('samples at TxUpdatedInterval with the configured measurands and increasing seqNo', async () => {
    const cp = await startChargePoint({ timeFactor: SAMPLING_TIME_FACTOR });
    const changed = collect(cp, 'configurationChanged', () => true);
    const measurands =
      'Energy.Active.Import.Register,Power.Active.Import,SoC,Current.Import,Voltage';
    expect(
      await cs.setVariables('CS-1', [
        ['SampledDataCtrlr', 'TxUpdatedInterval', '30'],
        ['SampledDataCtrlr', 'TxUpdatedMeasurands', measurands],
        ['SampledDataCtrlr', 'TxUpdatedInterval', 'often'],
        ['SampledDataCtrlr', 'NoSuchVariable', '1'],
        ['NoSuchCtrlr', 'Interval', '1'],
      ]),
    ).toEqual(['Accepted', 'Accepted', 'Rejected', 'UnknownVariable', 'UnknownComponent']);
    expect(changed.items.map((item) => item.payload)).toEqual([
      { key: 'SampledDataCtrlr.TxUpdatedInterval', value: '30' },
      { key: 'SampledDataCtrlr.TxUpdatedMeasurands', value: measurands },
    ]);
    expect(cp.sampleIntervalSeconds).toBe(30);
    const got = await cs.call('CS-1', 'GetVariables', {
      getVariableData: [
        { component: { name: 'SampledDataCtrlr' }, variable: { name: 'TxUpdatedInterval' } },
        { component: { name: 'TxCtrlr' }, variable: { name: 'EVConnectionTimeOut' } },
        { component: { name: 'TxCtrlr' }, variable: { name: 'Bogus' } },
      ],
    });
    expect(got.getVariableResult.map((r) => [r.attributeStatus, r.attributeValue])).toEqual([
      ['Accepted', '30'],
      ['Accepted', '60'],
      ['UnknownVariable', undefined],
    ]);

    const { transactionId } = await startCharging(cp);
    const samples = collect(cp, 'meterValues', (event) => event.transactionId === transactionId);
    await samples.untilCount(7);
    const lastSample = samples.items.at(-1)?.payload;
    // Timed by the station's own sample timestamps: the event fires once the CSMS answered, so
    // its arrival time would add the round trip, which a loaded machine stretches at random.
    const periodic = cs
      .transactionEvents(transactionId)
      .filter((e) => e.triggerReason === 'MeterValuePeriodic')
      .slice(0, 7);
    const [first, ...rest] = periodic;
    const last = rest.at(-1);
    if (!first || !last || !lastSample) throw new Error('no samples');
    const sampledMs = (event: TransactionEventRequest) =>
      Date.parse(event.meterValue?.[0]?.timestamp ?? '');
    // Loose bounds for a busy machine.
    const intervalMs = (30 * 1000) / SAMPLING_TIME_FACTOR;
    const wallMsPerInterval = (sampledMs(last) - sampledMs(first)) / rest.length;
    expect(wallMsPerInterval).toBeGreaterThan(intervalMs * 0.7);
    expect(wallMsPerInterval).toBeLessThan(intervalMs * 3);
    const simulatedHours =
      ((sampledMs(last) - sampledMs(first)) / 1000) * (SAMPLING_TIME_FACTOR / 3600);
    const averagePowerW = ((register(last) ?? 0) - (register(first) ?? 0)) / simulatedHours;
    expect(averagePowerW).toBeGreaterThan(50_000 * 0.7);
    expect(averagePowerW).toBeLessThan(50_000 * 1.3);
    expect(lastSample.powerW).toBe(50_000);
    expect(lastSample.socPercent).toBeGreaterThan(35);

    await waitUntil(() => cs.transactionEvents(transactionId).length >= 8);
    const events = cs.transactionEvents(transactionId);
    expect(events.map((e) => e.seqNo)).toEqual(events.map((_, index) => index));
    const updates = events.slice(1);
    expect(updates.every((e) => e.eventType === 'Updated')).toBe(true);
    expect(updates.every((e) => e.triggerReason === 'MeterValuePeriodic')).toBe(true);
    expect(updates.every((e) => e.transactionInfo.chargingState === 'Charging')).toBe(true);
    const values = updates.at(-1)?.meterValue?.[0]?.sampledValue ?? [];
    expect(values.map((v) => [v.measurand, v.unitOfMeasure?.unit, v.context])).toEqual([
      ['Energy.Active.Import.Register', 'Wh', 'Sample.Periodic'],
      ['Power.Active.Import', 'W', 'Sample.Periodic'],
      ['SoC', 'Percent', 'Sample.Periodic'],
      ['Current.Import', 'A', 'Sample.Periodic'],
      ['Voltage', 'V', 'Sample.Periodic'],
    ]);
    const registers = updates.map((e) => register(e) ?? 0);
    expect(registers).toEqual([...registers].sort((a, b) => a - b));
    expect(registers.at(-1)).toBeGreaterThan(1_000_000);
  });

  it('ends on RequestStopTransaction with reason Remote and the exact register', async () => {
    const cp = await startChargePoint();
    await cs.setVariables('CS-1', [['SampledDataCtrlr', 'TxUpdatedInterval', '30']]);
    const { transactionId } = await startCharging(cp);
    const lastSample = await cp.waitFor('meterValues', (m) => m.transactionId === transactionId);
    const stopped = cp.waitFor('transactionStopped');
    const conf = await cs.call('CS-1', 'RequestStopTransaction', { transactionId });
    expect(conf.status).toBe('Accepted');
    const event = await stopped;
    expect(event).toMatchObject({ connectorId: 1, transactionId, reason: 'Remote' });
    const ended = await cs.waitForMessage('TransactionEvent', (e) => e.eventType === 'Ended');
    expect(ended).toMatchObject({
      triggerReason: 'RemoteStop',
      transactionInfo: { transactionId, stoppedReason: 'Remote', chargingState: 'EVConnected' },
    });
    expect(register(ended)).toBe(event.meterStop);
    expect(ended.meterValue?.[0]?.sampledValue[0]?.context).toBe('Transaction.End');
    expect(event.meterStop).toBeGreaterThanOrEqual(lastSample.registerWh);
    const events = cs.transactionEvents(transactionId);
    expect(events.map((e) => e.seqNo)).toEqual(events.map((_, index) => index));
    expect(events.at(-1)).toBe(ended);

    // No energy flows once the transaction is over.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(cp.state(1)).toMatchObject({ registerWh: event.meterStop, powerW: 0, deliveredWh: 0 });
    const unknown = await cs.call('CS-1', 'RequestStopTransaction', { transactionId: 'nope' });
    expect(unknown.status).toBe('Rejected');
  });

  it('ends with Local on interrupt, with EVDisconnected on unplug, and goes Available', async () => {
    const cp = await startChargePoint();
    const first = await startCharging(cp);
    await cp.interrupt(1, 'Local');
    expect(cs.transactionEvents(first.transactionId).at(-1)).toMatchObject({
      eventType: 'Ended',
      triggerReason: 'StopAuthorized',
      transactionInfo: { stoppedReason: 'Local' },
    });
    expect(cp.state(1)).toMatchObject({ status: 'Occupied', plugged: true });
    await cp.unplug(1);
    expect(cs.messages('StatusNotification').at(-1)).toMatchObject({
      evseId: 1,
      connectorStatus: 'Available',
    });

    const second = await startCharging(cp);
    await cp.unplug(1);
    expect(cs.transactionEvents(second.transactionId).at(-1)).toMatchObject({
      eventType: 'Ended',
      triggerReason: 'EVDeparted',
      transactionInfo: { stoppedReason: 'EVDisconnected', chargingState: 'Idle' },
    });
    expect(cp.state(1)).toMatchObject({ status: 'Available', plugged: false });
  });

  it('waits EVConnectionTimeOut for the vehicle after a remote start, then lapses', async () => {
    const cp = await startChargePoint();
    // One simulated hour (6 s of wall time) for the vehicle to arrive.
    await cs.setVariables('CS-1', [['TxCtrlr', 'EVConnectionTimeOut', '3600']]);
    expect((await requestStart('EARLY-BIRD', undefined)).status).toBe('Accepted');
    expect(cp.state(1).idTag).toBe('EARLY-BIRD');
    const started = cp.waitFor('transactionStarted');
    await cp.plugIn(1, IONIQ);
    expect(await started).toMatchObject({ connectorId: 1, idTag: 'EARLY-BIRD' });
    expect(cs.transactionEvents()[0]).toMatchObject({
      eventType: 'Started',
      triggerReason: 'CablePluggedIn',
      idToken: { idToken: 'EARLY-BIRD' },
    });

    await cs.setVariables('CS-1', [['TxCtrlr', 'EVConnectionTimeOut', '30']]);
    const lapsed = cp.waitFor('warning', (w) => w.message.includes('EVConnectionTimeOut'));
    expect((await requestStart('NO-SHOW', 2)).status).toBe('Accepted');
    await lapsed;
    await cp.plugIn(2, IONIQ);
    expect(cs.transactionEvents().filter((e) => e.evse?.id === 2)).toEqual([]);
  });

  it('starts at EVConnected when TxStartPoint says so, and authorizes on the remote start', async () => {
    const cp = await startChargePoint();
    await withoutPeriodicSamples();
    expect(await cs.setVariables('CS-1', [['TxCtrlr', 'TxStartPoint', 'EVConnected']])).toEqual([
      'Accepted',
    ]);
    expect(await cs.setVariables('CS-1', [['TxCtrlr', 'TxStartPoint', 'Sometime']])).toEqual([
      'Rejected',
    ]);
    await cp.plugIn(1, IONIQ);
    const started = await cs.waitForMessage('TransactionEvent', (e) => e.eventType === 'Started');
    expect(started).toMatchObject({
      triggerReason: 'CablePluggedIn',
      seqNo: 0,
      transactionInfo: { chargingState: 'EVConnected' },
    });
    expect(started.idToken).toBeUndefined();
    const transactionId = started.transactionInfo.transactionId;
    expect(cp.state(1)).toMatchObject({ transactionId, powerW: 0 });

    const announced = cp.waitFor('transactionStarted');
    const conf = await requestStart('LATE-AUTH');
    expect(conf).toEqual({ status: 'Accepted', transactionId });
    expect(await announced).toMatchObject({ transactionId, idTag: 'LATE-AUTH' });
    const authorized = await cs.waitForMessage('TransactionEvent', (e) => e.seqNo === 1);
    expect(authorized).toMatchObject({
      eventType: 'Updated',
      triggerReason: 'RemoteStart',
      idToken: { idToken: 'LATE-AUTH', type: 'Central' },
      transactionInfo: { transactionId, chargingState: 'Charging' },
    });
    await waitUntil(() => cp.state(1).deliveredWh > 0);
    expect(cp.state(1).powerW).toBe(50_000);
  });

  it('starts at Authorized without a vehicle and ends with Timeout if none arrives', async () => {
    const cp = await startChargePoint();
    await cs.setVariables('CS-1', [
      ['TxCtrlr', 'TxStartPoint', 'Authorized'],
      ['TxCtrlr', 'EVConnectionTimeOut', '600'],
    ]);
    const started = cp.waitFor('transactionStarted');
    await requestStart('EARLY', 1);
    const { transactionId } = await started;
    expect(cs.transactionEvents(transactionId)[0]).toMatchObject({
      eventType: 'Started',
      triggerReason: 'RemoteStart',
      transactionInfo: { chargingState: 'Idle' },
    });
    await cp.plugIn(1, IONIQ);
    expect(cs.transactionEvents(transactionId).at(-1)).toMatchObject({
      eventType: 'Updated',
      triggerReason: 'CablePluggedIn',
      transactionInfo: { chargingState: 'Charging' },
    });

    await cs.setVariables('CS-1', [['TxCtrlr', 'EVConnectionTimeOut', '30']]);
    const stopped = cp.waitFor('transactionStopped', (e) => e.connectorId === 2);
    await requestStart('NO-SHOW', 2);
    expect(await stopped).toMatchObject({ reason: 'Timeout' });
    expect(cs.transactionEvents().at(-1)).toMatchObject({
      eventType: 'Ended',
      triggerReason: 'EVConnectTimeout',
      transactionInfo: { stoppedReason: 'Timeout', chargingState: 'Idle' },
    });
  });

  it('keeps a stopped transaction open until unplug when TxStopPoint is EVConnected', async () => {
    const cp = await startChargePoint();
    await withoutPeriodicSamples();
    await cs.setVariables('CS-1', [['TxCtrlr', 'TxStopPoint', 'EVConnected']]);
    const { transactionId } = await startCharging(cp);
    await cs.call('CS-1', 'RequestStopTransaction', { transactionId });
    const halted = await cs.waitForMessage('TransactionEvent', (e) => e.seqNo === 1);
    expect(halted).toMatchObject({
      eventType: 'Updated',
      triggerReason: 'RemoteStop',
      transactionInfo: { chargingState: 'EVConnected' },
    });
    const { registerWh } = cp.state(1);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(cp.state(1)).toMatchObject({ transactionId, registerWh, powerW: 0 });
    const stopped = cp.waitFor('transactionStopped');
    await cp.unplug(1);
    expect(await stopped).toMatchObject({ transactionId, reason: 'Remote', meterStop: registerWh });
  });

  it('queues TransactionEvents while offline and delivers them in order, marked offline', async () => {
    const cp = await startChargePoint();
    await cs.setVariables('CS-1', [['SampledDataCtrlr', 'TxUpdatedInterval', '30']]);
    const { transactionId } = await startCharging(cp);
    await cs.waitForMessage('TransactionEvent', (e) => e.eventType === 'Updated');
    const dropped = cp.waitFor('disconnected');
    const back = cp.waitFor('reconnected', () => true, 15_000);
    await cs.drop('CS-1');
    await dropped;
    // Sampling goes on while the socket is down (ocpp-rpc waits ~1 s before reconnecting).
    const offlineSamples = collect(cp, 'meterValues', (m) => m.transactionId === transactionId);
    await offlineSamples.untilCount(3);
    const stopped = cp.waitFor('transactionStopped');
    await cp.interrupt(1);
    const { meterStop } = await stopped;
    expect(cp.queuedTransactionEvents).toBeGreaterThanOrEqual(4);
    await back;

    const ended = await cs.waitForMessage('TransactionEvent', (e) => e.eventType === 'Ended');
    expect(ended).toMatchObject({ offline: true, transactionInfo: { stoppedReason: 'Local' } });
    expect(register(ended)).toBe(meterStop);
    const events = cs.transactionEvents(transactionId);
    const seqNos = events.map((e) => e.seqNo);
    // An event whose answer was lost with the socket is sent again with the same seqNo.
    const distinct = seqNos.filter((seqNo, index) => index === 0 || seqNo !== seqNos[index - 1]);
    expect(distinct).toEqual(distinct.map((_, index) => index));
    const firstOffline = events.findIndex((e) => e.offline === true);
    expect(firstOffline).toBeGreaterThan(0);
    expect(events.slice(firstOffline).every((e) => e.offline === true)).toBe(true);
    expect(events.slice(firstOffline).length).toBeGreaterThanOrEqual(4);
    // The CSMS records the Ended before its answer reaches the station.
    await waitUntil(() => cp.queuedTransactionEvents === 0, 5_000, 'an empty queue');
    // Statuses are re-announced after the reconnect; there is no new boot.
    expect(cs.messages('BootNotification')).toHaveLength(1);
  });

  it('retries an unanswered TransactionEvent with the same seqNo and content', async () => {
    cs.unansweredTransactionEvents = 1;
    const cp = await startChargePoint({ callTimeoutMs: 300 });
    const { transactionId } = await startCharging(cp);
    const [first, second] = await waitUntil(() => {
      const starts = cs.transactionEvents(transactionId).filter((e) => e.eventType === 'Started');
      return starts.length >= 2 && starts;
    });
    expect(second).toEqual(first);
    await cs.waitForMessage('TransactionEvent', (e) => e.seqNo === 2);
    const seqNos = cs.transactionEvents(transactionId).map((e) => e.seqNo);
    expect(seqNos.slice(0, 4)).toEqual([0, 0, 1, 2]);
    expect(warnings.some((w) => String(w).includes('timeout'))).toBe(true);
    warnings = [];
  });

  it('sends every TransactionEvent twice with duplicateTransactionEvents', async () => {
    const cp = await startChargePoint({ duplicateTransactionEvents: true });
    await withoutPeriodicSamples();
    const { transactionId } = await startCharging(cp);
    await cp.interrupt(1);
    await waitUntil(() => cs.transactionEvents(transactionId).length >= 4);
    const events = cs.transactionEvents(transactionId);
    expect(events.map((e) => [e.eventType, e.seqNo])).toEqual([
      ['Started', 0],
      ['Started', 0],
      ['Ended', 1],
      ['Ended', 1],
    ]);
    expect(events[1]).toEqual(events[0]);
  });

  it('replays the TransactionEvents of a finished transaction unchanged', async () => {
    const cp = await startChargePoint();
    const { transactionId } = await startCharging(cp);
    await cp.interrupt(1, 'EmergencyStop');
    const original = cs.transactionEvents(transactionId);
    expect(original.at(-1)).toMatchObject({
      triggerReason: 'AbnormalCondition',
      transactionInfo: { stoppedReason: 'EmergencyStop' },
    });
    expect(await cp.replayTransactionEvents(1)).toBe(original.length);
    expect(await cp.replayTransactionEvents(transactionId)).toBe(original.length);
    const all = cs.transactionEvents(transactionId);
    expect(all).toEqual([...original, ...original, ...original]);
    await expect(cp.replayTransactionEvents(2)).rejects.toThrow(/no transaction/);
  });

  it('ends transactions with ImmediateReset and boots with RemoteReset on Reset', async () => {
    const cp = await startChargePoint();
    const { transactionId } = await startCharging(cp);
    const rebooted = cp.waitFor('connected');
    const reset = cp.waitFor('reset');
    expect((await cs.call('CS-1', 'Reset', { type: 'Immediate' })).status).toBe('Accepted');
    expect(await reset).toEqual({ type: 'Immediate' });
    await rebooted;
    expect(cs.transactionEvents(transactionId).at(-1)).toMatchObject({
      eventType: 'Ended',
      triggerReason: 'ResetCommand',
      transactionInfo: { stoppedReason: 'ImmediateReset' },
    });
    expect(cs.messages('BootNotification').map((b) => b.reason)).toEqual([
      'PowerUp',
      'RemoteReset',
    ]);
    // After the reboot the still-plugged vehicle makes the EVSE Occupied again.
    expect(cs.messages('StatusNotification').at(-2)).toMatchObject({
      evseId: 1,
      connectorStatus: 'Occupied',
    });

    const again = await startChargingOnPluggedEvse(cp);
    const onIdle = await cs.call('CS-1', 'Reset', { type: 'OnIdle' });
    expect(onIdle.status).toBe('Scheduled');
    const rebootedAgain = cp.waitFor('connected');
    await cs.call('CS-1', 'RequestStopTransaction', { transactionId: again });
    await rebootedAgain;
    expect(cs.messages('BootNotification')).toHaveLength(3);
  });

  it('answers GetBaseReport with NotifyReport pages listing its variables', async () => {
    await startChargePoint();
    const conf = await cs.call('CS-1', 'GetBaseReport', {
      requestId: 42,
      reportBase: 'FullInventory',
    });
    expect(conf.status).toBe('Accepted');
    const last = await cs.waitForMessage('NotifyReport', (r) => r.tbc === false);
    const pages = cs.messages('NotifyReport');
    expect(pages.at(-1)).toBe(last);
    expect(pages.map((p) => p.seqNo)).toEqual(pages.map((_, index) => index));
    expect(pages.every((p) => p.requestId === 42)).toBe(true);
    const entries = pages.flatMap((p) => p.reportData ?? []);
    const value = (component: string, variable: string) =>
      entries.find((e) => e.component.name === component && e.variable.name === variable)
        ?.variableAttribute[0]?.value;
    expect(value('TxCtrlr', 'TxStartPoint')).toBe('PowerPathClosed');
    expect(value('SampledDataCtrlr', 'TxUpdatedInterval')).toBe('60');
    expect(value('AuthCtrlr', 'AuthorizeRemoteStart')).toBe('false');
    expect(value('OCPPCommCtrlr', 'HeartbeatInterval')).toBe('300');
  });

  it('sends triggered messages and answers the remaining calls like hardware does', async () => {
    const cp = await startChargePoint();
    // GetTransactionStatus below must find the queue empty, not a periodic sample in flight.
    await withoutPeriodicSamples();
    const { transactionId } = await startCharging(cp);
    const trigger = (
      requestedMessage: IncomingCalls['TriggerMessage']['req']['requestedMessage'],
      evseId = 1,
    ) => cs.call('CS-1', 'TriggerMessage', { requestedMessage, evse: { id: evseId } });
    expect((await trigger('MeterValues')).status).toBe('Accepted');
    const meter = await cs.waitForMessage('MeterValues', (m) =>
      m.meterValue.some((v) => v.sampledValue[0]?.context === 'Trigger'),
    );
    expect(meter.evseId).toBe(1);
    expect((await trigger('TransactionEvent')).status).toBe('Accepted');
    await cs.waitForMessage('TransactionEvent', (e) => e.triggerReason === 'Trigger');
    expect((await trigger('TransactionEvent', 2)).status).toBe('Rejected');
    expect((await trigger('Heartbeat')).status).toBe('Accepted');
    await cs.waitForMessage('Heartbeat');
    expect((await trigger('LogStatusNotification')).status).toBe('NotImplemented');
    expect((await trigger('StatusNotification', 7)).status).toBe('Rejected');

    const unlock = await cs.call('CS-1', 'UnlockConnector', { evseId: 1, connectorId: 1 });
    expect(unlock.status).toBe('OngoingAuthorizedTransaction');
    const status = await cs.call('CS-1', 'GetTransactionStatus', { transactionId });
    expect(status).toEqual({ messagesInQueue: false, ongoingIndicator: true });
    const changed = await cs.call('CS-1', 'ChangeAvailability', {
      evse: { id: 1 },
      operationalStatus: 'Inoperative',
    });
    expect(changed.status).toBe('Scheduled');
    const idle = await cs.call('CS-1', 'ChangeAvailability', {
      evse: { id: 2 },
      operationalStatus: 'Inoperative',
    });
    expect(idle.status).toBe('Accepted');
    await cs.waitForMessage(
      'StatusNotification',
      (s) => s.evseId === 2 && s.connectorStatus === 'Unavailable',
    );
    await cs.call('CS-1', 'RequestStopTransaction', { transactionId });
    await cs.waitForMessage(
      'StatusNotification',
      (s) => s.evseId === 1 && s.connectorStatus === 'Unavailable',
    );
    expect((await cs.call('CS-1', 'DataTransfer', { vendorId: 'x' })).status).toBe(
      'UnknownVendorId',
    );
  });

  it('asks the CSMS to Authorize first when AuthorizeRemoteStart is true', async () => {
    const cp = await startChargePoint();
    await cs.setVariables('CS-1', [['AuthCtrlr', 'AuthorizeRemoteStart', 'true']]);
    await cp.plugIn(1, IONIQ);
    cs.authorizeStatus = 'Invalid';
    const refused = cp.waitFor('warning', (w) => w.message.includes('not authorized'));
    expect((await requestStart('STOLEN')).status).toBe('Accepted');
    await refused;
    expect(cs.messages('Authorize')).toMatchObject([{ idToken: { idToken: 'STOLEN' } }]);
    expect(cs.transactionEvents()).toEqual([]);
    cs.authorizeStatus = 'Accepted';
    const started = cp.waitFor('transactionStarted');
    expect((await requestStart('GOOD')).status).toBe('Accepted');
    expect(await started).toMatchObject({ idTag: 'GOOD' });
  });

  it('ends with DeAuthorized when the CSMS answers the idToken Invalid', async () => {
    cs.idTokenStatus = 'Invalid';
    const cp = await startChargePoint();
    const stopped = cp.waitFor('transactionStopped');
    await startCharging(cp, 'BLOCKED');
    expect(await stopped).toMatchObject({ connectorId: 1, reason: 'DeAuthorized' });
    expect(cs.transactionEvents().at(-1)).toMatchObject({
      eventType: 'Ended',
      triggerReason: 'Deauthorized',
      transactionInfo: { stoppedReason: 'DeAuthorized' },
    });
    warnings = [];
  });

  it('suspends at 100 % and unplugs when unplugWhenFull is set', async () => {
    const cp = await startChargePoint({ unplugWhenFull: true });
    const tiny: VehicleSpec = { model: 'Tiny', batteryKwh: 1, socPercent: 95, maxPowerW: 150_000 };
    const stopped = cp.waitFor('transactionStopped');
    const full = cp.waitFor('vehicleFull');
    await cp.plugIn(1, tiny);
    await requestStart('TOPUP');
    await full;
    const event = await stopped;
    expect(event.reason).toBe('EVDisconnected');
    const events = cs.transactionEvents(event.transactionId);
    expect(
      events.map((e) => [e.eventType, e.triggerReason, e.transactionInfo.chargingState]),
    ).toEqual(
      expect.arrayContaining([
        ['Updated', 'ChargingStateChanged', 'SuspendedEV'],
        ['Ended', 'EVDeparted', 'Idle'],
      ]),
    );
    // 5 % of 1 kWh through a 92 % efficient path.
    expect(event.meterStop - 1_000_000).toBeCloseTo((5 * 10) / CHARGING_EFFICIENCY, -1);
  });

  it('ends a transaction cut by disconnect() with PowerLoss on the next connect', async () => {
    const cp = await startChargePoint();
    const { transactionId } = await startCharging(cp);
    await cp.disconnect();
    const registerAtPowerOff = cp.state(1).registerWh;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(cp.state(1)).toMatchObject({ registerWh: registerAtPowerOff, powerW: 0 });
    await cp.connect();
    const ended = cs.transactionEvents(transactionId).at(-1);
    expect(ended).toMatchObject({
      eventType: 'Ended',
      transactionInfo: { stoppedReason: 'PowerLoss' },
    });
    expect(register(ended)).toBe(registerAtPowerOff);
  });

  it('leaves no timers running after disconnect', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const cp = await startChargePoint({ timeFactor: 1 });
    await startCharging(cp);
    await cp.disconnect();
    const after = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    expect(after).toBeLessThanOrEqual(before);
  });

  describe('charging profiles', () => {
    type Profile = IncomingCalls['SetChargingProfile']['req']['chargingProfile'];
    const profile = (id: number, purpose: Profile['chargingProfilePurpose'], limit: number) => ({
      id,
      stackLevel: 0,
      chargingProfilePurpose: purpose,
      chargingProfileKind: 'Relative',
      chargingSchedule: [
        { id, chargingRateUnit: 'W' as const, chargingSchedulePeriod: [{ startPeriod: 0, limit }] },
      ],
    });
    const set = (evseId: number, chargingProfile: Profile) =>
      cs.call('CS-1', 'SetChargingProfile', { evseId, chargingProfile });
    const drawnAfter = async (cp: ChargePoint201, limitW: number | null) => {
      await cp.waitFor('powerLimit', (e) => e.connectorId === 1 && e.limitW === limitW);
      return (await cp.waitFor('meterValues', (m) => m.connectorId === 1)).powerW;
    };

    it('the drawn power follows a TxProfile set on the transaction and its clear', async () => {
      const cp = await startChargePoint();
      const { transactionId } = await startCharging(cp);
      await cp.waitFor('meterValues', (m) => m.transactionId === transactionId && m.powerW > 0);
      const wrongTx = await set(1, { ...profile(5, 'TxProfile', 9_000), transactionId: 'other' });
      expect(wrongTx.status).toBe('Rejected');
      const limited = drawnAfter(cp, 9_000);
      const conf = await set(1, { ...profile(5, 'TxProfile', 9_000), transactionId });
      expect(conf.status).toBe('Accepted');
      expect(await limited).toBe(9_000);
      const lifted = drawnAfter(cp, null);
      const cleared = await cs.call('CS-1', 'ClearChargingProfile', { chargingProfileId: 5 });
      expect(cleared.status).toBe('Accepted');
      expect(await lifted).toBe(50_000);
      const again = await cs.call('CS-1', 'ClearChargingProfile', { chargingProfileId: 5 });
      expect(again.status).toBe('Unknown');
    });

    it('answers GetCompositeSchedule: the station max under a lower default', async () => {
      await startChargePoint();
      expect((await set(0, profile(1, 'ChargingStationMaxProfile', 30_000))).status).toBe(
        'Accepted',
      );
      expect((await set(2, profile(2, 'TxDefaultProfile', 40_000))).status).toBe('Accepted');
      const composite = await cs.call('CS-1', 'GetCompositeSchedule', {
        evseId: 1,
        duration: 600,
        chargingRateUnit: 'W',
      });
      expect(composite).toMatchObject({
        status: 'Accepted',
        schedule: {
          evseId: 1,
          duration: 600,
          chargingRateUnit: 'W',
          chargingSchedulePeriod: [{ startPeriod: 0, limit: 30_000 }],
        },
      });
      const unknown = await cs.call('CS-1', 'GetCompositeSchedule', { evseId: 9, duration: 60 });
      expect(unknown.status).toBe('Rejected');
    });

    it('rejects-profiles answers Rejected; profiles-not-supported a CALLERROR', async () => {
      const rejecting = await startChargePoint({ personality: 'rejects-profiles' });
      expect((await set(1, profile(1, 'TxDefaultProfile', 1_000))).status).toBe('Rejected');
      await rejecting.disconnect();
      await startChargePoint({ personality: 'profiles-not-supported' });
      await expect(set(1, profile(1, 'TxDefaultProfile', 1_000))).rejects.toMatchObject({
        rpcErrorCode: 'NotImplemented',
      });
      const unit = await cs.call('CS-1', 'GetVariables', {
        getVariableData: [
          { component: { name: 'SmartChargingCtrlr' }, variable: { name: 'RateUnit' } },
        ],
      });
      expect(unit.getVariableResult[0]?.attributeStatus).toBe('UnknownComponent');
    });
  });

  it('is a SimulatedChargePoint like ChargePoint16', async () => {
    const cp = await startChargePoint();
    const options = { url: cs.url, identity: 'X', connectors: 1 };
    const both: SimulatedChargePoint[] = [cp, new ChargePoint16(options)];
    const neutral = both[0];
    if (!neutral) throw new Error('unreachable');
    const started = neutral.waitFor('transactionStarted');
    await neutral.plugIn(1, IONIQ);
    await requestStart('NEUTRAL');
    const { transactionId } = await started;
    const stopped = neutral.waitFor('transactionStopped', (e) => e.transactionId === transactionId);
    await neutral.interrupt(1, 'Remote');
    expect((await stopped).reason).toBe('Remote');
    await neutral.setStatus(0, 'Unavailable');
    expect(neutral.state(2).status).toBe('Unavailable');
  });
});

/** Starts a transaction on EVSE 1, whose vehicle is still plugged; returns its id. */
async function startChargingOnPluggedEvse(cp: ChargePoint201): Promise<string> {
  const started = cp.waitFor('transactionStarted');
  expect((await requestStart('AGAIN')).status).toBe('Accepted');
  return (await started).transactionId;
}

const CLI = simulatorCli('ocpp201');

describe('the ocpp201 CLI', () => {
  // Not inside the test's own time limit: compiling on a loaded machine can take most of it.
  beforeAll(() => buildSimulatorsIfStale(CLI), 120_000);

  it('runs a station that boots, plugs a vehicle and charges on a remote start', async () => {
    const child = spawn(
      process.execPath,
      [
        CLI,
        '--url',
        cs.url,
        '--id',
        'CS-1',
        '--password',
        PASSWORD,
        '--connectors',
        '2',
        '--time-factor',
        String(TIME_FACTOR),
        '--plug',
        '2:model=Renault Zoe,batteryKwh=52,soc=20,maxPowerW=50000',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const lines: Record<string, unknown>[] = [];
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const complete = buffered.split('\n');
      buffered = complete.pop() ?? '';
      for (const line of complete) lines.push(JSON.parse(line) as Record<string, unknown>);
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const needs = await cs.waitForMessage('NotifyEVChargingNeeds', () => true, 15_000);
      await waitUntil(() => lines.some((l) => l.event === 'plugged'), 5_000, 'plugged line');
      expect(needs).toMatchObject({ evseId: 2, chargingNeeds: { requestedEnergyTransfer: 'DC' } });
      expect((await requestStart('CLI-DRIVER', 2)).status).toBe('Accepted');
      await waitUntil(() => lines.find((l) => l.event === 'transactionStarted'), 5_000);
      expect(lines.find((l) => l.event === 'connected')).toMatchObject({ cp: 'CS-1' });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(lines.at(-1)).toMatchObject({ event: 'shutdown', signal: 'SIGTERM' });
  });
});
