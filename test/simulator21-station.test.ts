import { spawn } from 'node:child_process';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { VehicleSpec } from '../simulators/ocpp201/charge-point.js';
import type { IncomingCalls } from '../simulators/ocpp201/ocpp-messages.js';
import type {
  SampledValue,
  TransactionEventRequest,
  TransactionLimit,
} from '../simulators/ocpp201/ocpp-types.js';
import { ChargePoint21 } from '../simulators/ocpp21/charge-point.js';
import type { ChargePoint21Options, Tariff } from '../simulators/ocpp21/charge-point.js';
import type { IncomingCalls21 } from '../simulators/ocpp21/ocpp-messages.js';
import { ocpp21Validator } from '../simulators/shared/ocpp21-validator.js';
import { FakeCsms } from './helpers/fake-csms201.js';
import { buildSimulatorsIfStale, simulatorCli } from './helpers/simulator-build.js';
import { waitUntil } from './helpers/wait.js';

const PASSWORD = 'sim-secret-21';
const TIME_FACTOR = 600;
// 50 kW: a limit of a few kWh is seconds of wall time away, so a loaded machine still gives it in
// time; 30 simulated seconds between samples are then 417 Wh.
const MAX_POWER_W = 50_000;
const SAMPLE_WH = Math.ceil((30 * MAX_POWER_W) / 3600);
const IONIQ: VehicleSpec = {
  model: 'Hyundai Ioniq 5',
  batteryKwh: 77.4,
  socPercent: 20,
  maxPowerW: 150_000,
};
const TARIFF: Tariff = {
  tariffId: 'DC-NGN',
  currency: 'NGN',
  energy: { prices: [{ priceKwh: 412.5 }] },
  fixedFee: { prices: [{ priceFixed: 100 }] },
};

/**
 * A bare strict OCPP 2.1 CSMS: ocpp-rpc validates every frame both ways against 2.1's schemas,
 * so a station frame that 2.1 forbids is a validation failure (checked after every test).
 */
class Csms21 extends FakeCsms<IncomingCalls & IncomingCalls21> {
  /** The transactionLimit to put in the answer to a TransactionEvent (undefined: none). */
  limitFor: (event: TransactionEventRequest) => TransactionLimit | undefined = () => undefined;

  static start(): Promise<Csms21> {
    return new Csms21('ocpp2.1', PASSWORD, [ocpp21Validator()]).listen();
  }

  protected override transactionEventExtras(event: TransactionEventRequest) {
    const limit = this.limitFor(event);
    return limit ? { transactionLimit: limit } : {};
  }

  ended(transactionId: string): Promise<TransactionEventRequest> {
    return this.waitForMessage(
      'TransactionEvent',
      (e) => e.eventType === 'Ended' && e.transactionInfo.transactionId === transactionId,
    );
  }

  async variables(
    identity: string,
    names: [component: string, variable: string, instance?: string][],
  ): Promise<(string | undefined)[]> {
    const conf = await this.call(identity, 'GetVariables', {
      getVariableData: names.map(([component, variable, instance]) => ({
        component: { name: component },
        variable: { name: variable, ...(instance ? { instance } : {}) },
      })),
    });
    return conf.getVariableResult.map((result) => result.attributeValue);
  }
}

function register(event: TransactionEventRequest | undefined): number {
  const values: SampledValue[] = event?.meterValue?.[0]?.sampledValue ?? [];
  const energy = values.find(
    (v) => (v.measurand ?? 'Energy.Active.Import.Register') === 'Energy.Active.Import.Register',
  );
  if (!energy) throw new Error(`no register in ${JSON.stringify(event)}`);
  return energy.value;
}

let cs: Csms21;
let chargePoints: ChargePoint21[] = [];
let warnings: unknown[] = [];
let nextRemoteStartId = 1;

async function startStation(overrides: Partial<ChargePoint21Options> = {}): Promise<ChargePoint21> {
  const cp = new ChargePoint21({
    url: cs.url,
    identity: 'CS-21',
    password: PASSWORD,
    connectors: 2,
    timeFactor: TIME_FACTOR,
    maxPowerW: MAX_POWER_W,
    ...overrides,
  });
  chargePoints.push(cp);
  cp.on('warning', ({ error }) => warnings.push(error));
  await cp.connect();
  return cp;
}

/** Plugs the Ioniq into EVSE 1, starts remotely; resolves with the transaction's Started event. */
async function startCharging(cp: ChargePoint21): Promise<TransactionEventRequest> {
  const started = cp.waitFor('transactionStarted', (event) => event.connectorId === 1);
  await cp.plugIn(1, IONIQ);
  const conf = await cs.call('CS-21', 'RequestStartTransaction', {
    evseId: 1,
    remoteStartId: nextRemoteStartId++,
    idToken: { idToken: 'DRIVER-21', type: 'Central' },
  });
  expect(conf.status).toBe('Accepted');
  const { transactionId } = await started;
  return cs.waitForMessage(
    'TransactionEvent',
    (e) => e.eventType === 'Started' && e.transactionInfo.transactionId === transactionId,
  );
}

async function setInterval(seconds: number): Promise<void> {
  expect(
    await cs.setVariables('CS-21', [['SampledDataCtrlr', 'TxUpdatedInterval', String(seconds)]]),
  ).toEqual(['Accepted']);
}

function isRefusal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'rpcErrorCode' in error;
}

/** The cost the tariff gives to `energyWh` since the start, to the hundredth. */
// TARIFF's cost in hundredths, rounded half up once: 100.00 fixed + 412.5 per kWh.
const costOf = (energyWh: number): number => (10_000 + Math.round((412.5 * energyWh) / 10)) / 100;

beforeEach(async () => {
  cs = await Csms21.start();
});

afterEach(async () => {
  for (const cp of chargePoints) await cp.disconnect();
  chargePoints = [];
  await cs.close();
  // Strict mode both ways: every frame the station sent and answered was 2.1-valid.
  expect(cs.validationFailures).toEqual([]);
  expect(warnings.filter(isRefusal)).toEqual([]);
  warnings = [];
});

describe('ChargePoint21 against a bare strict OCPP 2.1 CSMS', () => {
  it('boots on ocpp2.1 and charges as the 2.0.1 station does', async () => {
    const cp = await startStation();
    const started = await startCharging(cp);
    expect(cs.messages('BootNotification')[0]).toMatchObject({ reason: 'PowerUp' });
    expect(started).toMatchObject({ triggerReason: 'RemoteStart', seqNo: 0 });
    const id = started.transactionInfo.transactionId;
    await cs.waitForMessage('TransactionEvent', (e) => e.triggerReason === 'MeterValuePeriodic');
    await cs.call('CS-21', 'RequestStopTransaction', { transactionId: id });
    const ended = await cs.ended(id);
    expect(ended.transactionInfo.stoppedReason).toBe('Remote');
    // No tariff, no limit: nothing 2.1 adds.
    expect(cs.transactionEvents(id).every((e) => e.costDetails === undefined)).toBe(true);
    expect(cs.transactionEvents(id).some((e) => e.triggerReason === 'LimitSet')).toBe(false);
  });

  it('takes the limit from the Started answer, confirms LimitSet and stops the energy exactly at maxEnergy between samples', async () => {
    const cp = await startStation();
    // An hour between samples: only enforcement as the energy flows can stop it in time.
    await setInterval(3600);
    cs.limitFor = (e) => (e.eventType === 'Started' ? { maxEnergy: 4_000 } : undefined);
    const started = await startCharging(cp);
    const id = started.transactionInfo.transactionId;
    const limitSet = await cs.waitForMessage(
      'TransactionEvent',
      (e) => e.triggerReason === 'LimitSet',
    );
    expect(limitSet).toMatchObject({
      eventType: 'Updated',
      transactionInfo: { transactionId: id, transactionLimit: { maxEnergy: 4_000 } },
    });
    const ended = await cs.ended(id);
    expect(ended.triggerReason).toBe('EnergyLimitReached');
    expect(ended.transactionInfo.stoppedReason).toBe('EnergyLimitReached');
    expect(register(ended) - register(started)).toBe(4_000);
    expect(cs.transactionEvents(id).map((e) => e.triggerReason)).toEqual([
      'RemoteStart',
      'LimitSet',
      'EnergyLimitReached',
    ]);
    // The vehicle is still there and the meter stays where the limit stopped it.
    expect(cp.state(1)).toMatchObject({ plugged: true, transactionId: undefined });
    expect(cp.state(1).registerWh).toBe(register(ended));
  });

  it('takes a limit from any TransactionEvent answer (a triggered Updated), and a changed one again, confirming each once', async () => {
    const cp = await startStation();
    await setInterval(0);
    const started = await startCharging(cp);
    const id = started.transactionInfo.transactionId;
    let limit: TransactionLimit = { maxEnergy: 1_000_000 };
    // Every answer carries the limit the CSMS holds, as a CSMS that repeats itself would.
    cs.limitFor = (e) => (e.eventType === 'Ended' ? undefined : limit);
    const trigger = () =>
      cs.call('CS-21', 'TriggerMessage', { requestedMessage: 'TransactionEvent', evse: { id: 1 } });
    expect((await trigger()).status).toBe('Accepted');
    await cs.waitForMessage('TransactionEvent', (e) => e.triggerReason === 'LimitSet');
    expect(cp.heldLimit(1)).toEqual({ maxEnergy: 1_000_000 });
    const delivered = cp.state(1).deliveredWh;
    limit = { maxEnergy: delivered + 10_000, maxTime: 600 };
    expect((await trigger()).status).toBe('Accepted');
    const ended = await cs.ended(id);
    const reasons = cs.transactionEvents(id).map((e) => e.triggerReason);
    expect(reasons).toEqual([
      'RemoteStart',
      'Trigger',
      'LimitSet',
      'Trigger',
      'LimitSet',
      'EnergyLimitReached',
    ]);
    // maxTime is not enforced, so not held: the LimitSet says so.
    expect(cs.transactionEvents(id)[4]?.transactionInfo.transactionLimit).toEqual({
      maxEnergy: delivered + 10_000,
    });
    expect(register(ended) - register(started)).toBe(delivered + 10_000);
  });

  it('stops at a limit it is given after passing it, at once', async () => {
    const cp = await startStation();
    await setInterval(0);
    const started = await startCharging(cp);
    const id = started.transactionInfo.transactionId;
    await waitUntil(() => cp.state(1).deliveredWh > 2_000, 5_000, '2 kWh delivered');
    cs.limitFor = () => ({ maxEnergy: 1_000 });
    await cs.call('CS-21', 'TriggerMessage', { requestedMessage: 'TransactionEvent' });
    const ended = await cs.ended(id);
    expect(ended.triggerReason).toBe('EnergyLimitReached');
    const reasons = cs.transactionEvents(id).map((e) => e.triggerReason);
    expect(reasons.slice(-2)).toEqual(['LimitSet', 'EnergyLimitReached']);
  });

  it('limit-ignored confirms the limit and charges on past it', async () => {
    const cp = await startStation({ personality: 'limit-ignored' });
    await setInterval(30);
    cs.limitFor = (e) => (e.eventType === 'Started' ? { maxEnergy: 2_000 } : undefined);
    const started = await startCharging(cp);
    const id = started.transactionInfo.transactionId;
    await cs.waitForMessage('TransactionEvent', (e) => e.triggerReason === 'LimitSet');
    await cs.waitForMessage(
      'TransactionEvent',
      (e) => e.triggerReason === 'MeterValuePeriodic' && register(e) - register(started) > 4_000,
    );
    expect(cp.state(1).transactionId).toBe(id);
    await cs.call('CS-21', 'RequestStopTransaction', { transactionId: id });
    expect((await cs.ended(id)).transactionInfo.stoppedReason).toBe('Remote');
  });

  it('limit-overshoot ends at the first meter sample past the limit, within one sample of energy', async () => {
    const cp = await startStation({ personality: 'limit-overshoot' });
    await setInterval(30);
    cs.limitFor = (e) => (e.eventType === 'Started' ? { maxEnergy: 3_000 } : undefined);
    const started = await startCharging(cp);
    const id = started.transactionInfo.transactionId;
    const ended = await cs.ended(id);
    expect(ended.triggerReason).toBe('EnergyLimitReached');
    const events = cs.transactionEvents(id);
    const samples = events.filter((e) => e.triggerReason === 'MeterValuePeriodic');
    const last = samples.at(-1);
    const before = samples.at(-2) ?? started;
    const start = register(started);
    // The sample that saw the limit passed, and the one before it had not.
    expect(register(last) - start).toBeGreaterThanOrEqual(3_000);
    expect(register(before) - start).toBeLessThan(3_000);
    // Past the limit by up to one sample's energy (and the moments the stop takes).
    const over = register(ended) - start - 3_000;
    expect(over).toBeGreaterThan(0);
    expect(over).toBeLessThan(2 * SAMPLE_WH);
  });

  it('computes the cost locally: TariffCostCtrlr on, ChangeTransactionTariff, running and final cost in costDetails', async () => {
    const cp = await startStation();
    expect(
      await cs.variables('CS-21', [
        ['TariffCostCtrlr', 'Enabled', 'Tariff'],
        ['TariffCostCtrlr', 'Enabled', 'Cost'],
        ['TariffCostCtrlr', 'Available', 'Tariff'],
        ['TariffCostCtrlr', 'Available', 'Cost'],
        ['TariffCostCtrlr', 'Currency'],
      ]),
    ).toEqual(['true', 'true', 'true', 'true', 'NGN']);
    await setInterval(30);
    const started = await startCharging(cp);
    const id = started.transactionInfo.transactionId;
    const changed = await cs.call('CS-21', 'ChangeTransactionTariff', {
      transactionId: id,
      tariff: TARIFF,
    });
    expect(changed.status).toBe('Accepted');
    const tariffChanged = await cs.waitForMessage(
      'TransactionEvent',
      (e) => e.triggerReason === 'TariffChanged',
    );
    expect(tariffChanged.transactionInfo.tariffId).toBe('DC-NGN');
    const periodic = await cs.waitForMessage(
      'TransactionEvent',
      (e) => e.triggerReason === 'MeterValuePeriodic' && e.costDetails !== undefined,
    );
    const energy = register(periodic) - register(started);
    expect(periodic.costDetails).toMatchObject({
      totalCost: { currency: 'NGN', typeOfCost: 'NormalCost', total: { inclTax: costOf(energy) } },
      totalUsage: { energy },
    });
    await cs.call('CS-21', 'RequestStopTransaction', { transactionId: id });
    const ended = await cs.ended(id);
    const final = register(ended) - register(started);
    expect(ended.costDetails?.totalCost.total).toEqual({
      exclTax: costOf(final),
      inclTax: costOf(final),
    });
    expect(ended.costDetails?.totalUsage.energy).toBe(final);
    expect(ended.costDetails?.totalUsage.chargingTime).toBeGreaterThan(0);
  });

  it('stops at maxCost under its tariff with CostLimitReached, never above the amount', async () => {
    const cp = await startStation();
    await setInterval(3600);
    const started = await startCharging(cp);
    const id = started.transactionInfo.transactionId;
    cs.limitFor = (e) => (e.triggerReason === 'TariffChanged' ? { maxCost: 2_000 } : undefined);
    expect(
      (await cs.call('CS-21', 'ChangeTransactionTariff', { transactionId: id, tariff: TARIFF }))
        .status,
    ).toBe('Accepted');
    const ended = await cs.ended(id);
    expect(ended.triggerReason).toBe('CostLimitReached');
    expect(ended.transactionInfo.stoppedReason).toBe('EnergyLimitReached');
    const energy = register(ended) - register(started);
    // (2000 - 100) / 412.5 NGN per kWh = 4,606.06 Wh: the last whole Wh within the amount.
    expect(energy).toBe(4_606);
    expect(ended.costDetails?.totalCost.total.inclTax).toBe(costOf(4_606));
    expect(costOf(4_606)).toBeLessThanOrEqual(2_000);
    expect(costOf(4_607)).toBeGreaterThan(2_000);
  });

  it('prices a new transaction by its default tariff; GetTariffs and ClearTariffs; refuses what it cannot price', async () => {
    const cp = await startStation();
    expect((await cs.call('CS-21', 'GetTariffs', { evseId: 0 })).status).toBe('NoTariff');
    const set = await cs.call('CS-21', 'SetDefaultTariff', { evseId: 0, tariff: TARIFF });
    expect(set.status).toBe('Accepted');
    const withCondition: Tariff = {
      ...TARIFF,
      tariffId: 'NIGHT',
      energy: { prices: [{ priceKwh: 200, conditions: { startTimeOfDay: '22:00' } }] },
    };
    const twoPrices: Tariff = {
      ...TARIFF,
      tariffId: 'TWO',
      energy: { prices: [{ priceKwh: 200 }, { priceKwh: 300 }] },
    };
    expect(
      (await cs.call('CS-21', 'SetDefaultTariff', { evseId: 1, tariff: withCondition })).status,
    ).toBe('ConditionNotSupported');
    expect(
      (await cs.call('CS-21', 'SetDefaultTariff', { evseId: 1, tariff: twoPrices })).status,
    ).toBe('TooManyElements');
    expect((await cs.call('CS-21', 'SetDefaultTariff', { evseId: 9, tariff: TARIFF })).status).toBe(
      'Rejected',
    );
    await setInterval(0);
    const started = await startCharging(cp);
    const id = started.transactionInfo.transactionId;
    expect(started.transactionInfo.tariffId).toBe('DC-NGN');
    expect(started.costDetails?.totalCost.total.inclTax).toBe(100);
    const tariffs = await cs.call('CS-21', 'GetTariffs', { evseId: 1 });
    expect(tariffs).toEqual({
      status: 'Accepted',
      tariffAssignments: [
        { tariffId: 'DC-NGN', tariffKind: 'DefaultTariff' },
        { tariffId: 'DC-NGN', tariffKind: 'DriverTariff', evseIds: [1] },
      ],
    });
    expect(
      (
        await cs.call('CS-21', 'ChangeTransactionTariff', {
          transactionId: id,
          tariff: { ...TARIFF, currency: 'USD' },
        })
      ).status,
    ).toBe('NoCurrencyChange');
    expect(
      (await cs.call('CS-21', 'ChangeTransactionTariff', { transactionId: 'nope', tariff: TARIFF }))
        .status,
    ).toBe('TxNotFound');
    expect(await cs.call('CS-21', 'ClearTariffs', { tariffIds: ['DC-NGN', 'OTHER'] })).toEqual({
      clearTariffsResult: [
        { tariffId: 'DC-NGN', status: 'Accepted' },
        { tariffId: 'OTHER', status: 'NoTariff' },
      ],
    });
    await cs.call('CS-21', 'RequestStopTransaction', { transactionId: id });
    // The running transaction kept its tariff.
    expect((await cs.ended(id)).transactionInfo.tariffId).toBe('DC-NGN');
  });

  it('no-local-cost: TariffCostCtrlr off and not switchable, tariff calls not implemented, maxCost not held', async () => {
    const cp = await startStation({ personality: 'no-local-cost' });
    expect(
      await cs.variables('CS-21', [
        ['TariffCostCtrlr', 'Enabled', 'Tariff'],
        ['TariffCostCtrlr', 'Available', 'Cost'],
      ]),
    ).toEqual(['false', 'false']);
    const enable = await cs.call('CS-21', 'SetVariables', {
      setVariableData: [
        {
          component: { name: 'TariffCostCtrlr' },
          variable: { name: 'Enabled', instance: 'Tariff' },
          attributeValue: 'true',
        },
      ],
    });
    expect(enable.setVariableResult[0]?.attributeStatus).toBe('Rejected');
    await expect(
      cs.call('CS-21', 'SetDefaultTariff', { evseId: 0, tariff: TARIFF }),
    ).rejects.toMatchObject({ rpcErrorCode: 'NotImplemented' });
    await setInterval(3600);
    cs.limitFor = (e) =>
      e.eventType === 'Started' ? { maxEnergy: 2_500, maxCost: 500 } : undefined;
    const started = await startCharging(cp);
    const id = started.transactionInfo.transactionId;
    const limitSet = await cs.waitForMessage(
      'TransactionEvent',
      (e) => e.triggerReason === 'LimitSet',
    );
    expect(limitSet.transactionInfo.transactionLimit).toEqual({ maxEnergy: 2_500 });
    const ended = await cs.ended(id);
    expect(ended.triggerReason).toBe('EnergyLimitReached');
    expect(register(ended) - register(started)).toBe(2_500);
  });

  it('refuses 2.0.1 personalities of 1.6 and 2.1 personalities on a 2.0.1 station', async () => {
    const { ChargePoint201 } = await import('../simulators/ocpp201/charge-point.js');
    expect(
      () =>
        new ChargePoint201({
          url: cs.url,
          identity: 'X',
          connectors: 1,
          personality: 'limit-ignored',
        }),
    ).toThrow(/applies to ocpp2.1 only/);
    expect(
      () =>
        new ChargePoint21({
          url: cs.url,
          identity: 'X',
          connectors: 1,
          personality: 'numeric-values',
        }),
    ).toThrow(/applies to ocpp1.6 only/);
    expect(
      () =>
        new ChargePoint21({
          url: cs.url,
          identity: 'X',
          connectors: 1,
          personality: 'limit-ignored,limit-overshoot',
        }),
    ).toThrow(/conflict/);
  });
});

describe('the ocpp21 CLI', () => {
  const cli = simulatorCli('ocpp21');
  // Not inside the test's own time limit: compiling on a loaded machine can take most of it.
  beforeAll(() => buildSimulatorsIfStale(cli), 120_000);

  it('runs a 2.1 station with a 2.1 personality that boots and reports its EVSEs', async () => {
    const child = spawn(
      process.execPath,
      [
        cli,
        ...['--url', cs.url, '--id', 'CS-21', '--password', PASSWORD, '--connectors', '2'],
        ...['--personality', 'limit-overshoot'],
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await cs.waitForMessage('StatusNotification', (s) => s.evseId === 2, 15_000);
      expect(cs.messages('BootNotification')).toHaveLength(1);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
