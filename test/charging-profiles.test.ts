import fc from 'fast-check';
import ocppRpc from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_HASH, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { CHARGER_PASSWORD } from './helpers/gateway.js';
import { rawCharger, type RawClient } from './helpers/raw-charger.js';
import { assertSchemaValid } from './helpers/ocpp-schemas.js';
import { waitUntil } from './helpers/wait.js';
import { ceilingPeriod, PHASE_VOLTAGE_V } from '../src/ocpp/calls/power-limit.js';

const { createRPCError } = ocppRpc;

/**
 * The load manager's ceilings as they go on the wire: the exact SetChargingProfile and
 * ClearChargingProfile each protocol sends, checked against the official schemas as received.
 */

const schemaValid = (subprotocol: string, action: string, params: unknown) =>
  assertSchemaValid(subprotocol as 'ocpp1.6' | 'ocpp2.0.1', action, params);

const connectors = [
  { id: '1', tariff: 'ac', type: 'AC' as const, maxPowerKw: 22 },
  { id: '2', tariff: 'dc', type: 'DC' as const, maxPowerKw: 150 },
  { id: '3', tariff: 'ac', maxPowerKw: 22 },
];
const charger = (id: string) => ({ id, passwordHash: PASSWORD_HASH, connectors });

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({
    chargers: ['CP-A', 'CP-W', 'CP-N', 'CS-A', 'CS-W'].map(charger),
  });
});
afterAll(async () => {
  await t.close();
});

interface Charger {
  cp: RawClient;
  frames: { action: string; params: Record<string, unknown> }[];
  /** What the charger answers the next profile call with; a string is a status, else a CALLERROR. */
  reply: string | { error: string };
}

/** What a charger with this answer to the rate-unit key says (null: the key is unknown). */
async function charger16(id: string, rateUnit: string | null): Promise<Charger> {
  const cp = await rawCharger(t.gw.ocppUrl, id, CHARGER_PASSWORD);
  const c: Charger = { cp, frames: [], reply: 'Accepted' };
  let configured = false;
  cp.handle('ChangeConfiguration', async () => ({ status: 'Accepted' }));
  cp.handle('GetConfiguration', async ({ params }) => {
    configured = true;
    const keys = (params as { key?: string[] }).key ?? [];
    const known = keys.filter((k) => k === 'ChargingScheduleAllowedChargingRateUnit' && rateUnit);
    return {
      configurationKey: known.map((key) => ({ key, readonly: true, value: rateUnit })),
      unknownKey: keys.filter((k) => !known.includes(k)),
    };
  });
  for (const action of ['SetChargingProfile', 'ClearChargingProfile'])
    cp.handle(action, async ({ params }) => profileAnswer(c, 'ocpp1.6', action, params));
  await cp.call('BootNotification', { chargePointVendor: 'Acme', chargePointModel: 'X' });
  await waitUntil(() => configured, 5000, 'configuration read');
  return c;
}

async function station201(id: string, rateUnit: string | null): Promise<Charger> {
  const cp = await rawCharger(t.gw.ocppUrl, id, CHARGER_PASSWORD, ['ocpp2.0.1']);
  const c: Charger = { cp, frames: [], reply: 'Accepted' };
  let configured = false;
  type Data = { component: { name: string }; variable: { name: string }; attributeValue: string };
  cp.handle('SetVariables', async ({ params }) => ({
    setVariableResult: (params as { setVariableData: Data[] }).setVariableData.map((d) => ({
      attributeStatus: 'Accepted',
      component: d.component,
      variable: d.variable,
    })),
  }));
  cp.handle('GetVariables', async ({ params }) => {
    configured = true;
    return {
      getVariableResult: (params as { getVariableData: Data[] }).getVariableData.map((d) => {
        const value = d.variable.name === 'RateUnit' ? rateUnit : null;
        return value === null
          ? { attributeStatus: 'UnknownVariable', component: d.component, variable: d.variable }
          : {
              attributeStatus: 'Accepted',
              attributeValue: value,
              component: d.component,
              variable: d.variable,
            };
      }),
    };
  });
  for (const action of ['SetChargingProfile', 'ClearChargingProfile'])
    cp.handle(action, async ({ params }) => profileAnswer(c, 'ocpp2.0.1', action, params));
  await cp.call('BootNotification', {
    reason: 'PowerUp',
    chargingStation: { vendorName: 'Acme', model: 'X' },
  });
  await waitUntil(() => configured, 5000, 'device model read');
  return c;
}

function profileAnswer(c: Charger, subprotocol: string, action: string, params: unknown) {
  schemaValid(subprotocol, action, params);
  c.frames.push({ action, params: params as Record<string, unknown> });
  if (typeof c.reply !== 'string') throw createRPCError(c.reply.error, 'not here');
  return { status: c.reply };
}

/** Sends one ceiling and returns the frame the charger received and the outcome. */
async function send(
  c: Charger,
  chargerId: string,
  connectorId: string,
  limit: Parameters<TestGateway['gw']['chargers']['setPowerLimit']>[2],
) {
  c.frames.length = 0;
  const outcome = await t.gw.chargers.setPowerLimit(chargerId, connectorId, limit);
  expect(c.frames).toHaveLength(1);
  const [frame] = c.frames;
  if (!frame) throw new Error('no frame reached the charger');
  return { frame, outcome };
}

/** A transaction the 1.6 charger starts on its connector; its id is the gateway's. */
async function start16(c: Charger, connectorId: number): Promise<string> {
  const reply = (await c.cp.call('StartTransaction', {
    connectorId,
    idTag: 'LOCAL-CARD',
    meterStart: 0,
    timestamp: new Date().toISOString(),
  })) as { transactionId: number };
  return String(reply.transactionId);
}

const stop16 = (c: Charger, transactionRef: string) =>
  c.cp.call('StopTransaction', {
    transactionId: Number(transactionRef),
    meterStop: 10,
    timestamp: new Date().toISOString(),
    reason: 'Local',
  });

/** A 2.0.1 transaction the station starts (seqNo 0) or ends (seqNo 1) on an EVSE. */
function event201(c: Charger, type: 'Started' | 'Ended', transactionId: string, evseId: number) {
  return c.cp.call('TransactionEvent', {
    eventType: type,
    timestamp: new Date().toISOString(),
    triggerReason: type === 'Started' ? 'Authorized' : 'StopAuthorized',
    seqNo: type === 'Started' ? 0 : 1,
    transactionInfo: {
      transactionId,
      ...(type === 'Ended' ? { stoppedReason: 'Local' } : { chargingState: 'Charging' }),
    },
    evse: { id: evseId, connectorId: 1 },
    ...(type === 'Started' ? { idToken: { idToken: 'LOCAL-CARD', type: 'ISO14443' } } : {}),
  });
}

/** A TxProfile asked for a transaction the charger does not run there: nothing goes out. */
async function notSent(
  c: Charger,
  chargerId: string,
  connectorId: string,
  transactionRef: string,
): Promise<void> {
  c.frames.length = 0;
  const outcome = await t.gw.chargers.setPowerLimit(chargerId, connectorId, {
    watts: 7_000,
    transactionRef,
  });
  expect(outcome).toBe('no_transaction');
  expect(c.frames).toEqual([]);
}

describe('charging profiles on the wire, OCPP 1.6', () => {
  let a: Charger;
  let w: Charger;
  let n: Charger;
  beforeAll(async () => {
    a = await charger16('CP-A', null);
    w = await charger16('CP-W', 'Power');
    n = await charger16('CP-N', 'Current,Power');
  });
  afterAll(async () => {
    for (const c of [a, w, n]) await c.cp.close({ force: true });
  });

  it('an AC connector gets a TxDefaultProfile in amperes over three phases, rounded down', async () => {
    const { frame, outcome } = await send(a, 'CP-A', '1', { watts: 11_000 });
    expect(outcome).toBe('accepted');
    expect(frame).toEqual({
      action: 'SetChargingProfile',
      params: {
        connectorId: 1,
        csChargingProfiles: {
          chargingProfileId: 70_001,
          stackLevel: 0,
          chargingProfilePurpose: 'TxDefaultProfile',
          chargingProfileKind: 'Relative',
          chargingSchedule: {
            chargingRateUnit: 'A',
            // 11 000 W / (230 V × 3) = 15.94 A: down to 15.9, never up.
            chargingSchedulePeriod: [{ startPeriod: 0, limit: 15.9, numberPhases: 3 }],
          },
        },
      },
    });
  });

  it('a running transaction gets a TxProfile on its id, one phase when told', async () => {
    const tx = await start16(a, 1);
    const { frame } = await send(a, 'CP-A', '1', {
      watts: 7_400,
      transactionRef: tx,
      phases: 1,
    });
    await stop16(a, tx);
    expect(frame.params).toEqual({
      connectorId: 1,
      csChargingProfiles: {
        chargingProfileId: 80_001,
        transactionId: Number(tx),
        stackLevel: 0,
        chargingProfilePurpose: 'TxProfile',
        chargingProfileKind: 'Relative',
        chargingSchedule: {
          chargingRateUnit: 'A',
          chargingSchedulePeriod: [{ startPeriod: 0, limit: 32.1, numberPhases: 1 }],
        },
      },
    });
  });

  it('a TxProfile goes out only with its transaction, running on its connector', async () => {
    // None ever started there, one running on another connector, one the charger stopped.
    await notSent(a, 'CP-A', '2', '999999');
    const tx = await start16(a, 1);
    await notSent(a, 'CP-A', '2', tx);
    expect((await send(a, 'CP-A', '1', { watts: 7_000, transactionRef: tx })).outcome).toBe(
      'accepted',
    );
    await stop16(a, tx);
    await notSent(a, 'CP-A', '1', tx);
    // The connector's TxDefaultProfile needs none.
    expect((await send(a, 'CP-A', '1', { watts: 7_000 })).outcome).toBe('accepted');
  });

  it('a DC connector is limited in whole watts without phases', async () => {
    const tx = await start16(n, 2);
    const { frame } = await send(n, 'CP-N', '2', { watts: 50_000.9, transactionRef: tx });
    await stop16(n, tx);
    const profile = frame.params.csChargingProfiles as Record<string, unknown>;
    expect(profile.chargingSchedule).toEqual({
      chargingRateUnit: 'W',
      chargingSchedulePeriod: [{ startPeriod: 0, limit: 50_000 }],
    });
  });

  it('a charger that takes only Power gets watts on AC too; an unstated type is AC', async () => {
    const ac = await send(w, 'CP-W', '1', { watts: 11_000 });
    expect(
      (ac.frame.params.csChargingProfiles as Record<string, unknown>).chargingSchedule,
    ).toEqual({
      chargingRateUnit: 'W',
      chargingSchedulePeriod: [{ startPeriod: 0, limit: 11_000, numberPhases: 3 }],
    });
    const untyped = await send(a, 'CP-A', '3', { watts: 4_140 });
    expect(
      (untyped.frame.params.csChargingProfiles as Record<string, unknown>).chargingSchedule,
    ).toEqual({
      chargingRateUnit: 'A',
      chargingSchedulePeriod: [{ startPeriod: 0, limit: 6, numberPhases: 3 }],
    });
  });

  it('watts null clears the ceiling by its id only; Unknown is no ceiling either', async () => {
    const byDefault = await send(a, 'CP-A', '1', { watts: null });
    expect(byDefault.frame).toEqual({ action: 'ClearChargingProfile', params: { id: 70_001 } });
    expect(byDefault.outcome).toBe('accepted');
    a.reply = 'Unknown';
    const onTx = await send(a, 'CP-A', '1', { watts: null, transactionRef: '42' });
    expect(onTx.frame.params).toEqual({ id: 80_001 });
    expect(onTx.outcome).toBe('accepted');
    a.reply = 'Accepted';
  });

  it('outcomes: Rejected is rejected, a CALLERROR NotImplemented is not_supported', async () => {
    a.reply = 'Rejected';
    expect((await send(a, 'CP-A', '1', { watts: 3_000 })).outcome).toBe('rejected');
    a.reply = { error: 'NotImplemented' };
    expect((await send(a, 'CP-A', '1', { watts: 3_000 })).outcome).toBe('not_supported');
    expect((await send(a, 'CP-A', '1', { watts: null })).outcome).toBe('not_supported');
    a.reply = 'Accepted';
  });

  it('the zero profile of the paid-energy stop stacks above every ceiling', async () => {
    a.frames.length = 0;
    expect(await t.gw.chargers.limitToZero('CP-A', '1', '42')).toBe('accepted');
    const zero = a.frames[0]?.params.csChargingProfiles as Record<string, unknown>;
    expect(zero).toMatchObject({ chargingProfileId: 90_001, stackLevel: 1 });
    expect(zero.stackLevel).toBeGreaterThan(0);
  });
});

describe('charging profiles on the wire, OCPP 2.0.1', () => {
  let a: Charger;
  let w: Charger;
  beforeAll(async () => {
    a = await station201('CS-A', null);
    w = await station201('CS-W', 'W');
  });
  afterAll(async () => {
    for (const c of [a, w]) await c.cp.close({ force: true });
  });

  it('an EVSE gets a TxDefaultProfile, a transaction a TxProfile on its id', async () => {
    const byDefault = await send(a, 'CS-A', '1', { watts: 11_000 });
    expect(byDefault.outcome).toBe('accepted');
    expect(byDefault.frame).toEqual({
      action: 'SetChargingProfile',
      params: {
        evseId: 1,
        chargingProfile: {
          id: 70_001,
          stackLevel: 0,
          chargingProfilePurpose: 'TxDefaultProfile',
          chargingProfileKind: 'Relative',
          chargingSchedule: [
            {
              id: 70_001,
              chargingRateUnit: 'A',
              chargingSchedulePeriod: [{ startPeriod: 0, limit: 15.9, numberPhases: 3 }],
            },
          ],
        },
      },
    });
    await event201(a, 'Started', 'tx-9f3a', 2);
    const onTx = await send(a, 'CS-A', '2', { watts: 90_000, transactionRef: 'tx-9f3a' });
    await event201(a, 'Ended', 'tx-9f3a', 2);
    expect(onTx.frame.params).toEqual({
      evseId: 2,
      chargingProfile: {
        id: 80_002,
        stackLevel: 0,
        chargingProfilePurpose: 'TxProfile',
        chargingProfileKind: 'Relative',
        transactionId: 'tx-9f3a',
        chargingSchedule: [
          {
            id: 80_002,
            chargingRateUnit: 'W',
            chargingSchedulePeriod: [{ startPeriod: 0, limit: 90_000 }],
          },
        ],
      },
    });
  });

  it('a TxProfile goes out only with its transaction, running on its EVSE (K01)', async () => {
    // None ever started there (the 80002 sent to an idle EVSE), one running on another EVSE, one
    // the station ended.
    await notSent(a, 'CS-A', '2', 'tx-idle');
    await event201(a, 'Started', 'tx-51c0', 1);
    await notSent(a, 'CS-A', '2', 'tx-51c0');
    expect((await send(a, 'CS-A', '1', { watts: 7_000, transactionRef: 'tx-51c0' })).outcome).toBe(
      'accepted',
    );
    await event201(a, 'Ended', 'tx-51c0', 1);
    await notSent(a, 'CS-A', '1', 'tx-51c0');
    expect((await send(a, 'CS-A', '2', { watts: 7_000 })).outcome).toBe('accepted');
  });

  it('a station whose RateUnit is W only gets watts on AC', async () => {
    const { frame } = await send(w, 'CS-W', '1', { watts: 11_000, phases: 1 });
    const profile = frame.params.chargingProfile as { chargingSchedule: unknown[] };
    expect(profile.chargingSchedule[0]).toMatchObject({
      chargingRateUnit: 'W',
      chargingSchedulePeriod: [{ startPeriod: 0, limit: 11_000, numberPhases: 1 }],
    });
  });

  it('watts null clears by chargingProfileId; outcomes follow the answer', async () => {
    const cleared = await send(a, 'CS-A', '2', { watts: null, transactionRef: 'tx-9f3a' });
    expect(cleared.frame).toEqual({
      action: 'ClearChargingProfile',
      params: { chargingProfileId: 80_002 },
    });
    expect(cleared.outcome).toBe('accepted');
    a.reply = 'Rejected';
    expect((await send(a, 'CS-A', '1', { watts: 1_000 })).outcome).toBe('rejected');
    a.reply = { error: 'NotImplemented' };
    expect((await send(a, 'CS-A', '1', { watts: 1_000 })).outcome).toBe('not_supported');
    a.reply = 'Accepted';
  });

  it('the zero profile stacks above the ceiling', async () => {
    a.frames.length = 0;
    expect(await t.gw.chargers.limitToZero('CS-A', '1', 'tx-1')).toBe('accepted');
    const zero = a.frames[0]?.params.chargingProfile as Record<string, unknown>;
    expect(zero).toMatchObject({ id: 90_001, stackLevel: 1 });
  });
});

describe("a ceiling in the charger's unit", () => {
  it('is never above the watts asked for, and within one step of them', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 2_000_000, noNaN: true }),
        fc.constantFrom(1 as const, 3 as const),
        fc.constantFrom('A' as const, 'W' as const),
        (watts, phases, unit) => {
          const { limit } = ceilingPeriod(watts, unit, 'AC', phases);
          const allowedW = unit === 'W' ? limit : limit * PHASE_VOLTAGE_V * phases;
          const stepW = unit === 'W' ? 1 : 0.1 * PHASE_VOLTAGE_V * phases;
          expect(allowedW).toBeLessThanOrEqual(watts + 1e-6);
          expect(allowedW).toBeGreaterThan(watts - stepW - 1e-6);
          // At most one decimal: what the 1.6 schema's multipleOf 0.1 accepts.
          expect(Math.abs(limit * 10 - Math.round(limit * 10))).toBeLessThan(1e-6);
        },
      ),
    );
  });
});
