import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChargePoint16 } from '../simulators/ocpp16/charge-point.js';
import type {
  ChargePointEventName,
  ChargePointEventPayload,
  ChargePointOptions,
  VehicleSpec,
} from '../simulators/ocpp16/charge-point.js';
import type {
  IncomingCalls,
  OutgoingCalls,
  SampledValue,
} from '../simulators/ocpp16/ocpp-types.js';
import { RecordingCentralSystem, type Answer } from './helpers/recording-central-system.js';
import {
  advanceSoc,
  chargingPowerW,
  CHARGING_EFFICIENCY,
  secondsUntilFull,
} from '../simulators/shared/vehicle-physics.js';

const PASSWORD = 'sim-secret-1';
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

/** A bare central system that answers everything a charge point sends and records it. */
class FakeCentralSystem extends RecordingCentralSystem<OutgoingCalls, IncomingCalls> {
  startStatus: 'Accepted' | 'Invalid' = 'Accepted';
  private nextTransactionId = 100;

  static start(): Promise<FakeCentralSystem> {
    return new FakeCentralSystem('ocpp1.6', PASSWORD).listen();
  }

  protected answers(answer: Answer<OutgoingCalls>): void {
    answer('BootNotification', () => this.bootConf());
    answer('Heartbeat', () => ({ currentTime: new Date().toISOString() }));
    answer('StatusNotification', () => ({}));
    answer('MeterValues', () => ({}));
    answer('Authorize', () => ({ idTagInfo: { status: 'Accepted' } }));
    answer('StartTransaction', () => ({
      transactionId: this.nextTransactionId++,
      idTagInfo: { status: this.startStatus },
    }));
    answer('StopTransaction', () => ({ idTagInfo: { status: 'Accepted' } }));
  }
}

function sample(values: SampledValue[], measurand: string): SampledValue | undefined {
  return values.find((value) => (value.measurand ?? 'Energy.Active.Import.Register') === measurand);
}

/** Collects events as they happen, so a test can wait for the n-th without racing. */
function collect<K extends ChargePointEventName>(
  cp: ChargePoint16,
  event: K,
  predicate: (payload: ChargePointEventPayload<K>) => boolean,
) {
  const items: { payload: ChargePointEventPayload<K> }[] = [];
  const waiters: (() => void)[] = [];
  const listener = (payload: ChargePointEventPayload<K>): void => {
    if (!predicate(payload)) return;
    items.push({ payload });
    for (const wake of waiters.splice(0)) wake();
  };
  cp.on(event, listener);
  return {
    items,
    async untilCount(count: number, timeoutMs = 5_000): Promise<void> {
      const deadline = performance.now() + timeoutMs;
      while (items.length < count) {
        if (performance.now() > deadline) throw new Error(`only ${items.length} ${event} events`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
  };
}

let cs: FakeCentralSystem;
let chargePoints: ChargePoint16[] = [];

async function startChargePoint(
  overrides: Partial<ChargePointOptions> = {},
): Promise<ChargePoint16> {
  const cp = new ChargePoint16({
    url: cs.url,
    identity: 'CP-1',
    password: PASSWORD,
    connectors: 2,
    timeFactor: TIME_FACTOR,
    ...overrides,
  });
  chargePoints.push(cp);
  await cp.connect();
  return cp;
}

async function startCharging(cp: ChargePoint16, idTag = 'DRIVER-0001') {
  const started = cp.waitFor('transactionStarted', (event) => event.connectorId === 1);
  await cp.plugIn(1, IONIQ);
  const conf = await cs.call(cp.identity, 'RemoteStartTransaction', { connectorId: 1, idTag });
  expect(conf.status).toBe('Accepted');
  return started;
}

beforeEach(async () => {
  cs = await FakeCentralSystem.start();
});

afterEach(async () => {
  for (const cp of chargePoints) await cp.disconnect();
  chargePoints = [];
  await cs.close();
  expect(cs.validationFailures).toEqual([]);
});

describe('vehicle physics', () => {
  const curve = { chargerMaxPowerW: 50_000, vehicleMaxPowerW: 150_000, batteryKwh: 77.4 };

  it('delivers the lower of charger and vehicle power, tapering above 80 %', () => {
    expect(chargingPowerW(curve, 50)).toBe(50_000);
    const slowCar = { chargerMaxPowerW: 150_000, vehicleMaxPowerW: 100_000, batteryKwh: 60 };
    expect(chargingPowerW(slowCar, 79)).toBe(100_000);
    expect(chargingPowerW(slowCar, 90)).toBeCloseTo(55_000);
    expect(chargingPowerW(slowCar, 99.999)).toBeCloseTo(10_000, -1);
    expect(chargingPowerW(slowCar, 100)).toBe(0);
  });

  it('integrates SoC independently of the step size and lands on 100 % exactly when full', () => {
    const oneStep = advanceSoc(curve, 35, 3_000);
    const manySteps = Array.from({ length: 30 }).reduce<number>(
      (soc) => advanceSoc(curve, soc, 100),
      35,
    );
    expect(manySteps).toBeCloseTo(oneStep, 9);
    // 60 s at 50 kW puts 0.92 * 833 Wh into a 77.4 kWh pack.
    expect(advanceSoc(curve, 35, 60) - 35).toBeCloseTo(
      ((50_000 / 60) * CHARGING_EFFICIENCY * 100) / 77_400,
      9,
    );
    const toFull = secondsUntilFull(curve, 35);
    expect(advanceSoc(curve, 35, toFull)).toBe(100);
    expect(advanceSoc(curve, 35, toFull * 0.999)).toBeLessThan(100);
  });
});

describe('ChargePoint16 against a bare OCPP 1.6J central system', () => {
  it('boots, then reports connector 0 and every connector Available', async () => {
    const cp = await startChargePoint({ vendor: 'Acme', model: 'DC-150' });
    const [boot] = cs.messages('BootNotification');
    expect(boot).toMatchObject({ chargePointVendor: 'Acme', chargePointModel: 'DC-150' });
    const statuses = cs.messages('StatusNotification');
    expect(statuses.map((s) => [s.connectorId, s.status, s.errorCode])).toEqual([
      [0, 'Available', 'NoError'],
      [1, 'Available', 'NoError'],
      [2, 'Available', 'NoError'],
    ]);
    expect(cp.isBooted).toBe(true);
    expect(cp.heartbeatIntervalSeconds).toBe(300);
  });

  it('retries the boot after the interval while the central system answers Pending', async () => {
    cs.bootReplies.push('Pending', 'Pending');
    cs.heartbeatInterval = 10;
    await startChargePoint();
    expect(cs.messages('BootNotification')).toHaveLength(3);
    expect(cs.messages('StatusNotification')).toHaveLength(3);
  });

  it('is refused with a wrong password', async () => {
    await expect(startChargePoint({ password: 'wrong' })).rejects.toThrow();
    expect(cs.received).toEqual([]);
  });

  it('sends Preparing and the SoC as meter values outside a transaction on plug-in', async () => {
    const cp = await startChargePoint({ meterStartWh: 2_000_000 });
    await cp.plugIn(1, IONIQ);
    await cs.waitForMessage(
      'StatusNotification',
      (s) => s.connectorId === 1 && s.status === 'Preparing',
    );
    const meter = await cs.waitForMessage('MeterValues', (m) => m.connectorId === 1);
    expect(meter.transactionId).toBeUndefined();
    const values = meter.meterValue[0]?.sampledValue ?? [];
    expect(sample(values, 'SoC')).toEqual({
      value: '35',
      measurand: 'SoC',
      unit: 'Percent',
      context: 'Sample.Periodic',
      location: 'EV',
    });
    expect(sample(values, 'Energy.Active.Import.Register')).toMatchObject({
      value: '2000000',
      unit: 'Wh',
    });
    expect(cp.state(1)).toMatchObject({
      status: 'Preparing',
      plugged: true,
      registerWh: 2_000_000,
    });
  });

  it('starts the transaction on RemoteStart with the right idTag and connector', async () => {
    const cp = await startChargePoint();
    const remoteStart = cp.waitFor('remoteStart');
    const started = await startCharging(cp, 'FLEET-DRIVER-42');
    expect(await remoteStart).toEqual({
      connectorId: 1,
      idTag: 'FLEET-DRIVER-42',
      status: 'Accepted',
    });
    const [start] = cs.messages('StartTransaction');
    expect(start).toMatchObject({
      connectorId: 1,
      idTag: 'FLEET-DRIVER-42',
      meterStart: 1_000_000,
    });
    expect(started).toEqual({
      connectorId: 1,
      transactionId: 100,
      idTag: 'FLEET-DRIVER-42',
      meterStart: 1_000_000,
    });
    await cs.waitForMessage(
      'StatusNotification',
      (s) => s.connectorId === 1 && s.status === 'Charging',
    );
    expect(cp.state(1)).toMatchObject({
      status: 'Charging',
      transactionId: 100,
      idTag: 'FLEET-DRIVER-42',
    });
  });

  it('waits for the vehicle after a remote start, then starts on plug-in', async () => {
    const cp = await startChargePoint();
    // One simulated hour (6 s of wall time) for the vehicle to arrive.
    await cs.call('CP-1', 'ChangeConfiguration', { key: 'ConnectionTimeOut', value: '3600' });
    const conf = await cs.call('CP-1', 'RemoteStartTransaction', { idTag: 'EARLY-BIRD' });
    expect(conf.status).toBe('Accepted');
    await cs.waitForMessage(
      'StatusNotification',
      (s) => s.connectorId === 1 && s.status === 'Preparing',
    );
    expect(cs.messages('StartTransaction')).toEqual([]);
    const started = cp.waitFor('transactionStarted');
    await cp.plugIn(1, IONIQ);
    expect(await started).toMatchObject({ connectorId: 1, idTag: 'EARLY-BIRD' });
  });

  it('lapses a remote start when no vehicle arrives within ConnectionTimeOut', async () => {
    const cp = await startChargePoint();
    const change = await cs.call('CP-1', 'ChangeConfiguration', {
      key: 'ConnectionTimeOut',
      value: '30',
    });
    expect(change.status).toBe('Accepted');
    expect(cp.connectionTimeoutSeconds).toBe(30);
    const lapsed = cp.waitFor('warning', (w) => w.message.includes('ConnectionTimeOut'));
    await cs.call('CP-1', 'RemoteStartTransaction', { connectorId: 2, idTag: 'NO-SHOW' });
    await lapsed;
    const connector2 = cs.messages('StatusNotification').filter((s) => s.connectorId === 2);
    expect(connector2.map((s) => s.status)).toEqual(['Available', 'Preparing', 'Available']);
    await cp.plugIn(2, IONIQ);
    expect(cs.messages('StartTransaction')).toEqual([]);
  });

  it('samples at MeterValueSampleInterval and grows the register at the simulated rate', async () => {
    const cp = await startChargePoint({ timeFactor: SAMPLING_TIME_FACTOR });
    const change = await cs.call('CP-1', 'ChangeConfiguration', {
      key: 'MeterValueSampleInterval',
      value: '30',
    });
    expect(change.status).toBe('Accepted');
    expect(cp.sampleIntervalSeconds).toBe(30);
    const { transactionId } = await startCharging(cp);
    const samples = collect(cp, 'meterValues', (event) => event.transactionId === transactionId);
    await samples.untilCount(7);
    const lastSample = samples.items.at(-1)?.payload;

    const inTransaction = cs
      .messages('MeterValues')
      .filter((m) => m.transactionId === transactionId);
    expect(inTransaction.length).toBeGreaterThanOrEqual(7);
    // Timed by the charger's own sample timestamps: the event fires once the central system
    // answered, so its arrival time would add the round trip, which a loaded machine stretches.
    const [first, ...rest] = inTransaction.slice(0, 7).map((m) => ({
      sampledMs: Date.parse(m.meterValue[0]?.timestamp ?? ''),
      registerWh: Number(
        sample(m.meterValue[0]?.sampledValue ?? [], 'Energy.Active.Import.Register')?.value,
      ),
    }));
    const last = rest.at(-1);
    if (!first || !last || !lastSample) throw new Error('no samples');
    const intervals = rest.length;
    const wallMsPerInterval = (last.sampledMs - first.sampledMs) / intervals;
    const intervalMs = (30 * 1000) / SAMPLING_TIME_FACTOR;
    expect(wallMsPerInterval).toBeGreaterThan(intervalMs * 0.8);
    expect(wallMsPerInterval).toBeLessThan(intervalMs * 1.6);
    const simulatedHours =
      ((last.sampledMs - first.sampledMs) / 1000) * (SAMPLING_TIME_FACTOR / 3600);
    const averagePowerW = (last.registerWh - first.registerWh) / simulatedHours;
    expect(averagePowerW).toBeGreaterThan(50_000 * 0.85);
    expect(averagePowerW).toBeLessThan(50_000 * 1.15);
    expect(lastSample.powerW).toBe(50_000);
    expect(lastSample.socPercent).toBeGreaterThan(35);
    const values = inTransaction.at(-1)?.meterValue[0]?.sampledValue ?? [];
    expect(values.map((v) => [v.measurand, v.unit, v.context])).toEqual([
      ['Energy.Active.Import.Register', 'Wh', 'Sample.Periodic'],
      ['Power.Active.Import', 'W', 'Sample.Periodic'],
      ['SoC', 'Percent', 'Sample.Periodic'],
    ]);
    expect(values.every((v) => /^\d+$/.test(v.value))).toBe(true);
  });

  it('stops on RemoteStop with reason Remote and meterStop equal to the register', async () => {
    const cp = await startChargePoint();
    const { transactionId } = await startCharging(cp);
    const lastSample = await cp.waitFor('meterValues', (m) => m.transactionId === transactionId);
    const stopped = cp.waitFor('transactionStopped');
    const conf = await cs.call('CP-1', 'RemoteStopTransaction', { transactionId });
    expect(conf.status).toBe('Accepted');
    const event = await stopped;
    const [stop] = cs.messages('StopTransaction');
    expect(stop).toMatchObject({ transactionId, reason: 'Remote', idTag: 'DRIVER-0001' });
    expect(stop?.meterStop).toBe(event.meterStop);
    expect(event.meterStop).toBeGreaterThanOrEqual(lastSample.registerWh);
    expect(cp.state(1).registerWh).toBe(event.meterStop);
    const finalValues = stop?.transactionData?.[0]?.sampledValue ?? [];
    expect(sample(finalValues, 'Energy.Active.Import.Register')).toMatchObject({
      value: String(event.meterStop),
      context: 'Transaction.End',
    });
    await cs.waitForMessage(
      'StatusNotification',
      (s) => s.connectorId === 1 && s.status === 'Finishing',
    );

    // No energy flows once the transaction is over.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(cp.state(1)).toMatchObject({ registerWh: event.meterStop, powerW: 0, deliveredWh: 0 });
    const unknown = await cs.call('CP-1', 'RemoteStopTransaction', { transactionId: 999 });
    expect(unknown.status).toBe('Rejected');
  });

  it('stops with reason Local on interrupt and goes Available after unplug', async () => {
    const cp = await startChargePoint();
    const { transactionId } = await startCharging(cp);
    await cp.waitFor('meterValues', (m) => m.transactionId === transactionId);
    await cp.interrupt(1);
    expect(cs.messages('StopTransaction')).toMatchObject([{ transactionId, reason: 'Local' }]);
    expect(cp.state(1)).toMatchObject({ status: 'Finishing', plugged: true });
    await cp.unplug(1);
    const statuses = cs.messages('StatusNotification').filter((s) => s.connectorId === 1);
    expect(statuses.map((s) => s.status)).toEqual([
      'Available',
      'Preparing',
      'Charging',
      'Finishing',
      'Available',
    ]);
    expect(cs.messages('StopTransaction')).toHaveLength(1);
  });

  it.for([
    { personality: '', order: ['StatusNotification:Finishing', 'StopTransaction'] },
    { personality: 'late-finishing', order: ['StopTransaction', 'StatusNotification:Finishing'] },
  ])('sends Finishing $personality as the spec sequence says: $order', async (c) => {
    const cp = await startChargePoint({ personality: c.personality });
    const { transactionId } = await startCharging(cp);
    await cp.waitFor('meterValues', (m) => m.transactionId === transactionId);
    const sent: string[] = [];
    cp.on('frame', ({ direction, message }) => {
      const [type, , action, params] = JSON.parse(message) as [number, string, string, unknown];
      if (direction !== 'out' || type !== 2) return;
      const status = (params as { status?: string }).status;
      sent.push(action === 'StatusNotification' ? `${action}:${String(status)}` : action);
    });
    await cp.interrupt(1);
    expect(sent.filter((m) => m !== 'MeterValues')).toEqual(c.order);
  });

  it.for([
    { personality: 'ignores-stop', reply: 'Accepted', stops: false },
    { personality: 'rejects-stop', reply: 'Rejected', stops: false },
  ])('$personality: answers a remote stop $reply and keeps charging', async (c) => {
    const cp = await startChargePoint({ personality: c.personality });
    const { transactionId } = await startCharging(cp);
    const conf = await cs.call('CP-1', 'RemoteStopTransaction', { transactionId });
    expect(conf.status).toBe(c.reply);
    const before = cp.state(1).registerWh;
    await cp.waitFor(
      'meterValues',
      (m) => m.transactionId === transactionId && m.registerWh > before,
    );
    expect(cp.state(1)).toMatchObject({ transactionId, status: 'Charging' });
    expect(cs.messages('StopTransaction')).toEqual([]);
  });

  it.for(['', 'ignores-profile', 'obeys-profile', 'rejects-profiles'])(
    "SetChargingProfile with a zero-power TxProfile on '%s'",
    async (personality) => {
      const cp = await startChargePoint({ personality });
      const { transactionId } = await startCharging(cp);
      await cp.waitFor('meterValues', (m) => m.transactionId === transactionId && m.powerW > 0);
      const obeys = personality === '' || personality === 'obeys-profile';
      const limited = obeys ? cp.waitFor('powerLimit', (e) => e.limitW === 0) : undefined;
      const conf = await cs.call('CP-1', 'SetChargingProfile', {
        connectorId: 1,
        csChargingProfiles: {
          chargingProfileId: 1,
          transactionId,
          stackLevel: 0,
          chargingProfilePurpose: 'TxProfile',
          chargingProfileKind: 'Relative',
          chargingSchedule: {
            chargingRateUnit: 'W',
            chargingSchedulePeriod: [{ startPeriod: 0, limit: 0 }],
          },
        },
      });
      expect(conf.status).toBe(personality === 'rejects-profiles' ? 'Rejected' : 'Accepted');
      // The obeying firmware applies it after its reaction time, before its next sample.
      await limited;
      const sample = await cp.waitFor('meterValues', (m) => m.transactionId === transactionId);
      // Only the obeying firmware holds the power at 0; the transaction stays open either way.
      if (obeys) expect(sample.powerW).toBe(0);
      else expect(sample.powerW).toBeGreaterThan(0);
      expect(cp.state(1).transactionId).toBe(transactionId);
    },
  );

  describe('charging profiles', () => {
    const schedule = (limit: number, unit: 'W' | 'A' = 'W', numberPhases?: number) => ({
      chargingRateUnit: unit,
      chargingSchedulePeriod: [
        { startPeriod: 0, limit, ...(numberPhases === undefined ? {} : { numberPhases }) },
      ],
    });
    const set = (
      connectorId: number,
      profile: IncomingCalls['SetChargingProfile']['req']['csChargingProfiles'],
    ) => cs.call('CP-1', 'SetChargingProfile', { connectorId, csChargingProfiles: profile });
    /** The next sample after the composed limit took effect. */
    const drawnAfter = async (cp: ChargePoint16, limitW: number | null) => {
      await cp.waitFor('powerLimit', (e) => e.connectorId === 1 && e.limitW === limitW);
      return (await cp.waitFor('meterValues', (m) => m.connectorId === 1)).powerW;
    };

    it('the drawn power is the min of the charger max and the Tx (else TxDefault) profile', async () => {
      const cp = await startChargePoint();
      // Before any transaction: 16 A on three phases at 230 V holds the next one to 11 040 W.
      const byDefault = {
        chargingProfileId: 7,
        stackLevel: 0,
        chargingProfilePurpose: 'TxDefaultProfile' as const,
        chargingProfileKind: 'Relative' as const,
        chargingSchedule: schedule(16, 'A', 3),
      };
      expect((await set(1, byDefault)).status).toBe('Accepted');
      const first = await startCharging(cp);
      const firstSample = await cp.waitFor(
        'meterValues',
        (m) => m.transactionId === first.transactionId,
      );
      expect(firstSample.powerW).toBe(11_040);
      const cap = {
        chargingProfileId: 1,
        stackLevel: 0,
        chargingProfilePurpose: 'ChargePointMaxProfile' as const,
        chargingProfileKind: 'Absolute' as const,
        chargingSchedule: schedule(7_000),
      };
      expect((await set(1, cap)).status).toBe('Rejected'); // the charger's own, on connector 0
      const capped = drawnAfter(cp, 7_000);
      expect((await set(0, cap)).status).toBe('Accepted');
      expect(await capped).toBe(7_000);
      const tx = {
        chargingProfileId: 8,
        transactionId: first.transactionId,
        stackLevel: 1,
        chargingProfilePurpose: 'TxProfile' as const,
        chargingProfileKind: 'Relative' as const,
        chargingSchedule: schedule(20_000),
      };
      expect((await set(1, { ...tx, transactionId: first.transactionId + 1 })).status).toBe(
        'Rejected',
      );
      expect((await set(1, tx)).status).toBe('Accepted');
      const uncapped = drawnAfter(cp, 20_000);
      const cleared = await cs.call('CP-1', 'ClearChargingProfile', { id: 1 });
      expect(cleared.status).toBe('Accepted');
      // The TxProfile outranks the default; nothing caps it any more.
      expect(await uncapped).toBe(20_000);
      expect((await cs.call('CP-1', 'ClearChargingProfile', { id: 1 })).status).toBe('Unknown');
      // The TxProfile ends with its transaction: the next one starts under the default again.
      await cs.call('CP-1', 'RemoteStopTransaction', { transactionId: first.transactionId });
      await cp.waitFor('transactionStopped');
      await cp.unplug(1);
      const second = await startCharging(cp, 'DRIVER-0002');
      const next = await cp.waitFor('meterValues', (m) => m.transactionId === second.transactionId);
      expect(next.powerW).toBe(11_040);
      const free = drawnAfter(cp, null);
      const byPurpose = await cs.call('CP-1', 'ClearChargingProfile', {
        connectorId: 1,
        chargingProfilePurpose: 'TxDefaultProfile',
      });
      expect(byPurpose.status).toBe('Accepted');
      expect(await free).toBe(50_000);
    });

    it('answers GetCompositeSchedule with the limit period by period', async () => {
      // Real time: the composite's offsets are the charger's seconds, and few of them pass here.
      await startChargePoint({ timeFactor: 1 });
      const conf = await set(0, {
        chargingProfileId: 3,
        stackLevel: 0,
        chargingProfilePurpose: 'ChargePointMaxProfile',
        chargingProfileKind: 'Absolute',
        chargingSchedule: {
          startSchedule: new Date().toISOString(),
          duration: 1_200,
          chargingRateUnit: 'W',
          chargingSchedulePeriod: [
            { startPeriod: 0, limit: 10_000 },
            { startPeriod: 600, limit: 20_000 },
          ],
        },
      });
      expect(conf.status).toBe('Accepted');
      const composite = await cs.call('CP-1', 'GetCompositeSchedule', {
        connectorId: 1,
        duration: 3_600,
        chargingRateUnit: 'W',
      });
      expect(composite).toMatchObject({ status: 'Accepted', connectorId: 1 });
      const periods = composite.chargingSchedule?.chargingSchedulePeriod ?? [];
      expect(periods.map((p) => p.limit)).toEqual([10_000, 20_000, 50_000]);
      const [, second, third] = periods;
      expect(periods[0]?.startPeriod).toBe(0);
      expect(second?.startPeriod).toBeGreaterThan(500);
      expect(second?.startPeriod).toBeLessThanOrEqual(600);
      expect((third?.startPeriod ?? 0) - (second?.startPeriod ?? 0)).toBe(600);
      expect(composite.chargingSchedule).toMatchObject({ duration: 3_600, chargingRateUnit: 'W' });
    });

    it('profiles-not-supported: no SmartCharging, the calls get a CALLERROR', async () => {
      await startChargePoint({ personality: 'profiles-not-supported' });
      const features = await cs.call('CP-1', 'GetConfiguration', {
        key: ['SupportedFeatureProfiles'],
      });
      expect(features.configurationKey?.[0]?.value).toBe(
        'Core,LocalAuthListManagement,RemoteTrigger',
      );
      await expect(
        set(1, {
          chargingProfileId: 1,
          stackLevel: 0,
          chargingProfilePurpose: 'TxDefaultProfile',
          chargingProfileKind: 'Relative',
          chargingSchedule: schedule(1_000),
        }),
      ).rejects.toMatchObject({ rpcErrorCode: 'NotImplemented' });
      await expect(
        cs.call('CP-1', 'GetCompositeSchedule', { connectorId: 1, duration: 60 }),
      ).rejects.toMatchObject({ rpcErrorCode: 'NotImplemented' });
    });
  });

  it('forgets-transaction-on-reboot: after a power cut no StopTransaction ever comes', async () => {
    const cp = await startChargePoint({ personality: 'forgets-transaction-on-reboot' });
    const { transactionId } = await startCharging(cp);
    await cp.disconnect();
    await cp.connect();
    expect(cp.state(1).transactionId).toBeUndefined();
    await cs.waitForMessage(
      'StatusNotification',
      (s) => s.connectorId === 1 && s.status === 'Preparing',
    );
    expect(cs.messages('StopTransaction').filter((m) => m.transactionId === transactionId)).toEqual(
      [],
    );
  });

  it('local-start: starts with its own idTag at plug-in, without Authorize', async () => {
    const cp = await startChargePoint({ personality: 'local-start=CARD-42' });
    const started = cp.waitFor('transactionStarted');
    await cp.plugIn(1, IONIQ);
    expect(await started).toMatchObject({ connectorId: 1, idTag: 'CARD-42' });
    expect(cs.messages('Authorize')).toEqual([]);
  });

  it('register-only: refuses a composite measurand list and samples only the register', async () => {
    const cp = await startChargePoint({ personality: 'register-only' });
    const composite = await cs.call('CP-1', 'ChangeConfiguration', {
      key: 'MeterValuesSampledData',
      value: 'Energy.Active.Import.Register,Power.Active.Import,SoC',
    });
    expect(composite.status).toBe('Rejected');
    const { transactionId } = await startCharging(cp);
    const sent = await cs.waitForMessage('MeterValues', (m) => m.transactionId === transactionId);
    expect(sent.meterValue[0]?.sampledValue.map((v) => v.measurand)).toEqual([
      'Energy.Active.Import.Register',
    ]);
  });

  it('stops with EVDisconnected when unplugged mid-transaction', async () => {
    const cp = await startChargePoint();
    const { transactionId } = await startCharging(cp);
    await cp.unplug(1);
    expect(cs.messages('StopTransaction')).toMatchObject([
      { transactionId, reason: 'EVDisconnected' },
    ]);
    expect(cp.state(1)).toMatchObject({ status: 'Available', plugged: false });
  });

  it('rejects remote starts when configured to', async () => {
    const cp = await startChargePoint({ remoteStart: 'reject' });
    await cp.plugIn(1, IONIQ);
    const conf = await cs.call('CP-1', 'RemoteStartTransaction', { connectorId: 1, idTag: 'X' });
    expect(conf.status).toBe('Rejected');
    expect(cs.messages('StartTransaction')).toEqual([]);
  });

  it('rejects remote starts on a Faulted connector', async () => {
    const cp = await startChargePoint();
    await cp.plugIn(1, IONIQ);
    await cp.setStatus(1, 'Faulted', 'GroundFailure');
    await cs.waitForMessage('StatusNotification', (s) => s.status === 'Faulted');
    expect(cs.messages('StatusNotification').at(-1)).toMatchObject({
      connectorId: 1,
      status: 'Faulted',
      errorCode: 'GroundFailure',
    });
    const conf = await cs.call('CP-1', 'RemoteStartTransaction', { connectorId: 1, idTag: 'X' });
    expect(conf.status).toBe('Rejected');
    const other = await cs.call('CP-1', 'RemoteStartTransaction', { connectorId: 2, idTag: 'Y' });
    expect(other.status).toBe('Accepted');
  });

  it('never answers when told to ignore remote starts, so the central system times out', async () => {
    const cp = await startChargePoint({ remoteStart: 'ignore' });
    const seen = cp.waitFor('remoteStart');
    await expect(
      cs.call('CP-1', 'RemoteStartTransaction', { connectorId: 1, idTag: 'X' }, 200),
    ).rejects.toThrow(/timeout/i);
    expect((await seen).status).toBe('Ignored');
  });

  it('stops with DeAuthorized when StartTransaction is answered Invalid', async () => {
    cs.startStatus = 'Invalid';
    const cp = await startChargePoint();
    const stopped = cp.waitFor('transactionStopped');
    await cp.plugIn(1, IONIQ);
    await cs.call('CP-1', 'RemoteStartTransaction', { connectorId: 1, idTag: 'STOLEN-CARD' });
    expect(await stopped).toMatchObject({ connectorId: 1, reason: 'DeAuthorized' });
    const [start] = cs.messages('StartTransaction');
    const [stop] = cs.messages('StopTransaction');
    expect(stop).toMatchObject({ reason: 'DeAuthorized', meterStop: start?.meterStart });
    expect(cs.messages('StatusNotification').some((s) => s.status === 'Charging')).toBe(false);
  });

  it('suspends at 100 % and unplugs when unplugWhenFull is set', async () => {
    const cp = await startChargePoint({ unplugWhenFull: true });
    const smallPack: VehicleSpec = {
      model: 'Tiny',
      batteryKwh: 1,
      socPercent: 95,
      maxPowerW: 150_000,
    };
    const stopped = cp.waitFor('transactionStopped');
    const full = cp.waitFor('vehicleFull');
    const unplugged = cp.waitFor('unplugged');
    await cp.plugIn(1, smallPack);
    await cs.call('CP-1', 'RemoteStartTransaction', { connectorId: 1, idTag: 'TOPUP' });
    await full;
    await unplugged;
    const event = await stopped;
    expect(event.reason).toBe('EVDisconnected');
    const [start] = cs.messages('StartTransaction');
    // 5 % of 1 kWh through a 92 % efficient path.
    expect(event.meterStop - (start?.meterStart ?? 0)).toBeCloseTo(
      (5 * 10) / CHARGING_EFFICIENCY,
      -1,
    );
    const statuses = cs.messages('StatusNotification').filter((s) => s.connectorId === 1);
    expect(statuses.map((s) => s.status)).toEqual([
      'Available',
      'Preparing',
      'Charging',
      'SuspendedEV',
      'Finishing',
      'Available',
    ]);
  });

  it('answers GetConfiguration and validates ChangeConfiguration', async () => {
    const cp = await startChargePoint();
    const got = await cs.call('CP-1', 'GetConfiguration', {
      key: ['MeterValueSampleInterval', 'NumberOfConnectors', 'NoSuchKey'],
    });
    expect(got.configurationKey).toEqual([
      { key: 'MeterValueSampleInterval', readonly: false, value: '60' },
      { key: 'NumberOfConnectors', readonly: true, value: '2' },
    ]);
    expect(got.unknownKey).toEqual(['NoSuchKey']);
    const change = (key: string, value: string) =>
      cs.call('CP-1', 'ChangeConfiguration', { key, value }).then((conf) => conf.status);
    expect(await change('NoSuchKey', '1')).toBe('NotSupported');
    expect(await change('MeterValueSampleInterval', 'often')).toBe('Rejected');
    expect(await change('NumberOfConnectors', '4')).toBe('Rejected');
    expect(await change('MeterValuesSampledData', 'SoC,Bogus.Measurand')).toBe('Rejected');
    expect(await change('MeterValuesSampledData', 'Energy.Active.Import.Register,Voltage')).toBe(
      'Accepted',
    );
    expect(cp.sampledMeasurands).toEqual(['Energy.Active.Import.Register', 'Voltage']);
    expect(await change('HeartbeatInterval', '60')).toBe('Accepted');
    expect(cp.heartbeatIntervalSeconds).toBe(60);
    const all = await cs.call('CP-1', 'GetConfiguration', {});
    expect(all.configurationKey?.length).toBeGreaterThan(10);
  });

  it('sends triggered messages after accepting TriggerMessage', async () => {
    await startChargePoint();
    const trigger = (
      requestedMessage: IncomingCalls['TriggerMessage']['req']['requestedMessage'],
    ) => cs.call('CP-1', 'TriggerMessage', { requestedMessage, connectorId: 1 });
    expect((await trigger('MeterValues')).status).toBe('Accepted');
    const meter = await cs.waitForMessage('MeterValues');
    expect(meter.meterValue[0]?.sampledValue[0]?.context).toBe('Trigger');
    expect((await trigger('Heartbeat')).status).toBe('Accepted');
    await cs.waitForMessage('Heartbeat');
    expect((await trigger('DiagnosticsStatusNotification')).status).toBe('NotImplemented');
    const unknown = await cs.call('CP-1', 'TriggerMessage', {
      requestedMessage: 'StatusNotification',
      connectorId: 7,
    });
    expect(unknown.status).toBe('Rejected');
  });

  it('ends transactions with SoftReset and boots again on a soft Reset', async () => {
    const cp = await startChargePoint();
    const { transactionId } = await startCharging(cp);
    const rebooted = cp.waitFor('connected');
    const conf = await cs.call('CP-1', 'Reset', { type: 'Soft' });
    expect(conf.status).toBe('Accepted');
    await rebooted;
    expect(cs.messages('StopTransaction')).toMatchObject([{ transactionId, reason: 'SoftReset' }]);
    expect(cs.messages('BootNotification')).toHaveLength(2);
    // After the reboot the still-plugged vehicle makes the connector Preparing again.
    expect(cs.messages('StatusNotification').at(-2)).toMatchObject({
      connectorId: 1,
      status: 'Preparing',
    });
  });

  it('answers the remaining Core calls like hardware does', async () => {
    const cp = await startChargePoint();
    const { transactionId } = await startCharging(cp);
    const changed = await cs.call('CP-1', 'ChangeAvailability', {
      connectorId: 1,
      type: 'Inoperative',
    });
    expect(changed.status).toBe('Scheduled');
    const stopped = cp.waitFor('transactionStopped');
    const unlock = await cs.call('CP-1', 'UnlockConnector', { connectorId: 1 });
    expect(unlock.status).toBe('Unlocked');
    expect(await stopped).toMatchObject({ transactionId, reason: 'UnlockCommand' });
    await cs.waitForMessage(
      'StatusNotification',
      (s) => s.connectorId === 1 && s.status === 'Unavailable',
    );
    const idle = await cs.call('CP-1', 'ChangeAvailability', {
      connectorId: 2,
      type: 'Inoperative',
    });
    expect(idle.status).toBe('Accepted');
    await cs.waitForMessage(
      'StatusNotification',
      (s) => s.connectorId === 2 && s.status === 'Unavailable',
    );
    const transfer = await cs.call('CP-1', 'DataTransfer', { vendorId: 'com.example' });
    expect(transfer.status).toBe('UnknownVendorId');
    expect((await cs.call('CP-1', 'ClearCache', {})).status).toBe('Accepted');
  });

  it('reconnects after a dropped socket without a new boot and delivers a stop made offline', async () => {
    const cp = await startChargePoint();
    const { transactionId } = await startCharging(cp);
    const dropped = cp.waitFor('disconnected');
    const back = cp.waitFor('reconnected');
    const beforeDrop = cs.received.length;
    await cs.drop('CP-1');
    await dropped;
    // The stop made offline waits in the charge point's transaction queue, sent on reconnect.
    await cp.interrupt(1);
    await back;
    await cs.waitForMessage('StopTransaction', () => true, 5_000, beforeDrop);
    expect(cs.messages('StopTransaction')).toMatchObject([{ transactionId, reason: 'Local' }]);
    expect(cs.messages('BootNotification')).toHaveLength(1);
    // Statuses are re-announced after the reconnect, since they may have changed offline.
    await cs.waitForMessage('StatusNotification', (s) => s.connectorId === 0, 5_000, beforeDrop);
  });

  it('ends a transaction interrupted by disconnect() with PowerLoss on the next connect', async () => {
    const cp = await startChargePoint();
    const { transactionId } = await startCharging(cp);
    await cp.disconnect();
    const registerAtPowerOff = cp.state(1).registerWh;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(cp.state(1)).toMatchObject({ registerWh: registerAtPowerOff, powerW: 0 });
    await cp.connect();
    expect(cs.messages('StopTransaction')).toMatchObject([
      { transactionId, reason: 'PowerLoss', meterStop: registerAtPowerOff },
    ]);
    expect(cp.state(1)).toMatchObject({ status: 'Finishing', transactionId: undefined });
  });

  it('leaves no timers running after disconnect', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const cp = await startChargePoint({ timeFactor: 1 });
    await startCharging(cp);
    await cp.disconnect();
    const after = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    expect(after).toBeLessThanOrEqual(before);
  });

  it('rejects waitFor after the timeout', async () => {
    const cp = await startChargePoint();
    await expect(cp.waitFor('transactionStarted', () => true, 30)).rejects.toThrow(/within 30 ms/);
  });
});
