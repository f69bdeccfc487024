import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measurandGap, samplingGap } from '../src/ocpp/metering/sampling-gap.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  PASSWORD_HASH,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { errorCode, mintToken, startSession, type JsonResponse } from './helpers/http.js';
import { configurationAnswer, rawCharger, type RawClient } from './helpers/raw-charger.js';
import { PROTOCOLS } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

/**
 * A charger that does not sample a transaction at the interval asked for cannot be held to a paid
 * amount: a RebootRequired answer or a value read back other than the one set is found at boot,
 * an idle charger is soft-reset once so that the value takes, and a Start is refused
 * (charger_unmetered) until a read shows the interval held.
 */

const INTERVAL = 'MeterValueSampleInterval';
/** The test gateway's meterSampleIntervalSeconds. */
const WANTED = '10';
const ids16 = ['R1', 'R2', 'R3', 'R4', 'R5', 'R6'];
const ids201 = ['V1'];
const simulated = PROTOCOLS.map((_, i) => `SIM-${i}`);

let t: TestGateway;
let token: string;
beforeAll(async () => {
  t = await startTestGateway({
    chargers: [...ids16, ...ids201, ...simulated].map((id) => ({
      id,
      passwordHash: PASSWORD_HASH,
      connectors: [{ id: '1', tariff: 'ac', maxPowerKw: 22 }],
    })),
  });
  token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
});
afterAll(async () => {
  await t.close();
});

const start = (chargerId: string): Promise<JsonResponse> =>
  startSession(
    t.gw.url,
    token,
    { chargerId, connectorId: '1', driverEmail: DRIVERS.ada.email },
    1_000,
  );
const sessions = (chargerId: string) =>
  (
    t.gw.db.prepare('SELECT count(*) AS n FROM sessions WHERE charger_id = ?').get(chargerId) as {
      n: number;
    }
  ).n;
const gapOf = (chargerId: string) =>
  (
    t.gw.db.prepare('SELECT reason FROM charger_sampling WHERE charger_id = ?').get(chargerId) as
      { reason: string } | undefined
  )?.reason;

/**
 * A 1.6 charger whose configuration is stored across its connections. `answer` is its reply to a
 * change of `key` (default the sample interval; any other key is Accepted and stored), `applies`
 * whether a reboot makes a pending value the one held, `keeps` an Accepted value not applied.
 */
function charger16(
  id: string,
  behaviour: { answer: string; applies: boolean; keeps?: boolean; key?: string },
  initial: Record<string, string> = { [INTERVAL]: '900' },
) {
  const key = behaviour.key ?? INTERVAL;
  const held = new Map(Object.entries(initial));
  let pending: string | null = null;
  const calls: string[] = [];
  let cp: RawClient | null = null;
  const boot = async () => {
    await cp?.close({ force: true });
    if (pending !== null && behaviour.applies) held.set(key, pending);
    pending = null;
    const client = await rawCharger(t.gw.ocppUrl, id, CHARGER_PASSWORD);
    cp = client;
    client.handle('GetConfiguration', async ({ params }) => {
      calls.push('GetConfiguration');
      return configurationAnswer(held, params);
    });
    client.handle('ChangeConfiguration', async ({ params }) => {
      const change = params as { key: string; value: string };
      calls.push(`ChangeConfiguration ${change.key}`);
      if (change.key !== key) held.set(change.key, change.value);
      else if (behaviour.answer === 'RebootRequired') pending = change.value;
      else if (!behaviour.keeps) held.set(change.key, change.value);
      return { status: change.key === key ? behaviour.answer : 'Accepted' };
    });
    client.handle('Reset', async ({ params }) => {
      calls.push(`Reset ${(params as { type: string }).type}`);
      return { status: 'Accepted' };
    });
    await client.call('BootNotification', { chargePointVendor: 'Acme', chargePointModel: 'AC22' });
    return client;
  };
  const configured = (n: number) =>
    waitUntil(
      () => calls.filter((c) => c === 'GetConfiguration').length >= n,
      5000,
      `configuration read ${n}`,
    );
  return {
    held,
    calls,
    boot,
    configured,
    close: () => cp?.close({ force: true }),
  };
}

describe('1.6: a sample interval that does not take', () => {
  it('RebootRequired: the idle charger is soft-reset once, Starts are refused until its interval holds', async () => {
    const c = charger16('R1', { answer: 'RebootRequired', applies: true });
    await c.boot();
    await waitUntil(() => c.calls.includes('Reset Soft'), 5000, 'soft reset');
    expect(gapOf('R1')).toMatch(/RebootRequired/);
    const refused = await start('R1');
    expect(refused.status).toBe(409);
    expect(errorCode(refused)).toBe('charger_unmetered');
    expect(JSON.stringify(refused.body)).toMatch(/RebootRequired/);
    expect(sessions('R1')).toBe(0);

    // The charger reboots; the value is in effect and read as held: a Start goes ahead.
    c.calls.length = 0;
    await c.boot();
    await c.configured(1);
    await waitUntil(() => gapOf('R1') === undefined, 5000, 'interval held after the reset');
    expect(c.held.get(INTERVAL)).toBe(WANTED);
    expect(c.calls).not.toContain(`ChangeConfiguration ${INTERVAL}`);
    expect((await start('R1')).status).toBe(200);
    await c.close();
  });

  it('a reset that does not make it take: one reset, however often the charger comes back', async () => {
    const c = charger16('R2', { answer: 'RebootRequired', applies: false });
    await c.boot();
    await waitUntil(() => c.calls.includes('Reset Soft'), 5000, 'soft reset');
    for (let boot = 2; boot <= 4; boot++) {
      await c.boot();
      await waitUntil(
        () => c.calls.filter((x) => x === `ChangeConfiguration ${INTERVAL}`).length === boot,
        5000,
        `interval asked again at boot ${boot}`,
      );
    }
    // Room for a second reset, had one followed the last boot's read-back.
    await new Promise((r) => setTimeout(r, 200));
    expect(c.calls.filter((x) => x.startsWith('Reset'))).toEqual(['Reset Soft']);
    const refused = await start('R2');
    expect(refused.status).toBe(409);
    expect(errorCode(refused)).toBe('charger_unmetered');
    expect(sessions('R2')).toBe(0);
    await c.close();
  });

  it('accepted but not applied, with a transaction open: no reset, Starts refused', async () => {
    const c = charger16('R3', { answer: 'Accepted', applies: true, keeps: true });
    c.held.set(INTERVAL, WANTED);
    const cp = await c.boot();
    await c.configured(1);
    // A transaction the charger started itself is open: a Soft reset would end it.
    await cp.call('StartTransaction', {
      connectorId: 1,
      idTag: 'LOCAL-CARD',
      meterStart: 0,
      timestamp: new Date().toISOString(),
    });
    // Its interval is lost (a firmware update, say) and it reboots with the transaction open.
    c.held.set(INTERVAL, '0');
    c.calls.length = 0;
    await c.boot();
    await waitUntil(() => c.calls.length >= 3, 5000, 'read, change, read back');
    await waitUntil(() => gapOf('R3') !== undefined, 5000, 'gap recorded');
    expect(gapOf('R3')).toMatch(/interval 0/);
    await new Promise((r) => setTimeout(r, 200));
    expect(c.calls.filter((x) => x.startsWith('Reset'))).toEqual([]);
    const refused = await start('R3');
    expect(refused.status).toBe(409);
    expect(errorCode(refused)).toBe('charger_unmetered');
    expect(sessions('R3')).toBe(0);
    await c.close();
  });
});

describe('1.6: a measurand list answered RebootRequired', () => {
  const LIST = 'MeterValuesSampledData';

  it('while the list in effect has no energy: reset once, Starts refused until it holds', async () => {
    const c = charger16(
      'R4',
      { answer: 'RebootRequired', applies: true, key: LIST },
      { [INTERVAL]: WANTED, [LIST]: 'Voltage' },
    );
    await c.boot();
    await waitUntil(() => c.calls.includes('Reset Soft'), 5000, 'soft reset');
    expect(gapOf('R4')).toMatch(/measurand list answered RebootRequired/);
    const refused = await start('R4');
    expect(refused.status).toBe(409);
    expect(errorCode(refused)).toBe('charger_unmetered');
    await c.boot();
    await waitUntil(() => gapOf('R4') === undefined, 5000, 'list held after the reset');
    expect((await start('R4')).status).toBe(200);
    await c.close();
  });

  it('while the list in effect already has the register: no reset, Starts go ahead', async () => {
    const c = charger16(
      'R5',
      { answer: 'RebootRequired', applies: true, key: LIST },
      { [INTERVAL]: WANTED, [LIST]: 'Energy.Active.Import.Register' },
    );
    await c.boot();
    await waitUntil(() => c.calls.length >= 3, 5000, 'read, change, read back');
    await new Promise((r) => setTimeout(r, 200));
    expect(c.calls.filter((x) => x.startsWith('Reset'))).toEqual([]);
    expect(gapOf('R5')).toBeUndefined();
    expect((await start('R5')).status).toBe(200);
    await c.close();
  });
});

describe('2.0.1: TxUpdatedInterval answered RebootRequired', () => {
  it('is reset OnIdle, and a Start is refused until the interval holds', async () => {
    type Datum = { component: { name: string }; variable: { name: string } };
    const calls: string[] = [];
    const cp = await rawCharger(t.gw.ocppUrl, 'V1', CHARGER_PASSWORD, ['ocpp2.0.1']);
    cp.handle('GetVariables', async ({ params }) => {
      calls.push('GetVariables');
      return {
        getVariableResult: (params as { getVariableData: Datum[] }).getVariableData.map((d) => ({
          attributeStatus: 'Accepted',
          attributeValue: d.variable.name === 'TxUpdatedInterval' ? '0' : '',
          component: d.component,
          variable: d.variable,
        })),
      };
    });
    cp.handle('SetVariables', async ({ params }) => {
      const data = (params as { setVariableData: Datum[] }).setVariableData;
      calls.push('SetVariables');
      return {
        setVariableResult: data.map((d) => ({
          attributeStatus: d.variable.name === 'TxUpdatedInterval' ? 'RebootRequired' : 'Accepted',
          component: d.component,
          variable: d.variable,
        })),
      };
    });
    cp.handle('Reset', async ({ params }) => {
      calls.push(`Reset ${(params as { type: string }).type}`);
      return { status: 'Accepted' };
    });
    await cp.call('BootNotification', {
      reason: 'PowerUp',
      chargingStation: { vendorName: 'Acme', model: 'DC150' },
    });
    await waitUntil(() => calls.includes('Reset OnIdle'), 5000, 'reset OnIdle');
    const refused = await start('V1');
    expect(refused.status).toBe(409);
    expect(errorCode(refused)).toBe('charger_unmetered');
    expect(sessions('V1')).toBe(0);
    await cp.close({ force: true });
  });
});

describe.each(PROTOCOLS.map((protocol, i) => ({ protocol, id: simulated[i]! })))(
  'the simulator with interval-after-reboot: $protocol.name',
  ({ protocol, id }) => {
    it('is reset once, comes back sampling at the interval asked for, and takes a Start', async () => {
      const notes = () =>
        (
          t.gw.db
            .prepare("SELECT note FROM ocpp_events WHERE charger_id = ? AND action = 'configure'")
            .all(id) as { note: string }[]
        ).map((row) => row.note);
      const cp = await protocol.connect(t.gw.ocppUrl, id, {
        connectors: 1,
        personality: 'interval-after-reboot',
      });
      try {
        await waitUntil(
          () => notes().some((n) => n.startsWith('sampling holds')),
          10_000,
          'interval held after the reset',
        );
        expect(notes().filter((n) => n.startsWith('soft reset'))).toEqual([
          'soft reset so that the sampling asked for takes: Accepted',
        ]);
        expect(gapOf(id)).toBeUndefined();
        // Both simulators' charge points say what interval their transaction samples use.
        expect((cp as unknown as { sampleIntervalSeconds: number }).sampleIntervalSeconds).toBe(
          Number(WANTED),
        );
        expect((await start(id)).status).toBe(200);
      } finally {
        await cp.disconnect();
      }
    });
  },
);

describe('across a gateway restart', () => {
  it('a charger that reconnects without booting is still refused', async () => {
    const c = charger16('R6', { answer: 'RebootRequired', applies: false });
    await c.boot();
    await waitUntil(() => c.calls.includes('Reset Soft'), 5000, 'soft reset');
    await c.close();
    await t.restart();
    // A reconnect is not a boot: nothing is read, and the verdict stands as recorded.
    const cp = await rawCharger(t.gw.ocppUrl, 'R6', CHARGER_PASSWORD);
    try {
      const refused = await start('R6');
      expect(refused.status).toBe(409);
      expect(errorCode(refused)).toBe('charger_unmetered');
      expect(sessions('R6')).toBe(0);
    } finally {
      await cp.close({ force: true });
    }
  });
});

describe('measurandGap', () => {
  it('is a gap only for a list answered RebootRequired while the one in effect has no energy', () => {
    const measurand = fc.constantFrom(
      'Energy.Active.Import.Register',
      'Energy.Active.Import.Interval',
      'Power.Active.Import',
      'SoC',
      'Voltage',
    );
    fc.assert(
      fc.property(
        fc.constantFrom(null, 'Accepted', 'Rejected', 'RebootRequired'),
        fc.option(fc.uniqueArray(measurand)),
        (answer, list) => {
          const before = list === null ? null : list.join(',');
          const energy = list?.some((m) => m.startsWith('Energy.')) ?? true;
          expect(measurandGap({ answer, before }) !== null).toBe(
            answer === 'RebootRequired' && !energy,
          );
        },
      ),
    );
  });
});

describe('samplingGap', () => {
  it('holds only an interval in effect, positive and no longer than asked', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3600 }),
        fc.constantFrom(null, 'Accepted', 'Rejected', 'NotSupported', 'RebootRequired'),
        fc.option(fc.oneof(fc.integer({ min: -10, max: 7200 }).map(String), fc.string())),
        (wanted, answer, held) => {
          const seconds = held === null ? NaN : Number(held.trim());
          const inEffect =
            answer !== 'RebootRequired' &&
            (held === null || (held.trim() !== '' && seconds > 0 && seconds <= wanted));
          expect(samplingGap({ wanted, answer, held }) === null).toBe(inEffect);
        },
      ),
    );
  });
});
