import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingHeld } from '../src/ocpp/charger-state/setting-held.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  PASSWORD_HASH,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { configurationAnswer, rawCharger, type RawClient } from './helpers/raw-charger.js';
import { SETTINGS_PACING } from '../src/ocpp/charger-state/settings-pacing.js';
import { waitUntil } from './helpers/wait.js';

/**
 * A charger keeps its settings across connections, as real ones do. The gateway reads them
 * first and changes only what differs, so a charger reconnecting (a reconnect storm after a
 * gateway restart) costs one round trip, not five.
 */

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

const MEASURANDS = 'Energy.Active.Import.Register,Power.Active.Import,SoC';

/** A 1.6 charger's stored configuration, kept across its connections; each call is recorded. */
function config16(initial: Record<string, string>) {
  const held = new Map(Object.entries(initial));
  const calls: string[] = [];
  const connect = async () => {
    const cp = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD);
    cp.handle('GetConfiguration', async ({ params }) => {
      calls.push('GetConfiguration');
      return configurationAnswer(held, params);
    });
    cp.handle('ChangeConfiguration', async ({ params }) => {
      const { key, value } = params as { key: string; value: string };
      calls.push(`ChangeConfiguration ${key}`);
      held.set(key, value);
      return { status: 'Accepted' };
    });
    await cp.call('BootNotification', { chargePointVendor: 'Acme', chargePointModel: 'AC22' });
    return cp;
  };
  return { held, calls, connect };
}

const metering = (chargerId: string) =>
  t.gw.db.prepare('SELECT measurands FROM charger_metering WHERE charger_id = ?').get(chargerId) as
    { measurands: string } | undefined;

describe('configuring a charger at boot', () => {
  it('1.6: changes what the charger lacks on its first boot, and only reads on a reconnect', async () => {
    const c = config16({ MeterValueSampleInterval: '60', StopTransactionOnInvalidId: 'false' });
    const first = await c.connect();
    // Read, four changes, the measurand list read back.
    await waitUntil(() => c.calls.length === 6, 5000, 'first configuration');
    expect(c.calls).toEqual([
      'GetConfiguration',
      'ChangeConfiguration MeterValueSampleInterval',
      'ChangeConfiguration MeterValuesSampledData',
      'ChangeConfiguration ConnectionTimeOut',
      'ChangeConfiguration StopTransactionOnInvalidId',
      'GetConfiguration',
    ]);
    expect(Object.fromEntries(c.held)).toEqual({
      MeterValueSampleInterval: '10',
      MeterValuesSampledData: MEASURANDS,
      ConnectionTimeOut: '4',
      StopTransactionOnInvalidId: 'true',
    });
    await first.close({ force: true });

    // The charger writes its values back its own way: case, spacing, order.
    c.held.set('StopTransactionOnInvalidId', 'True');
    c.held.set('MeterValuesSampledData', 'SoC, Energy.Active.Import.Register ,Power.Active.Import');
    c.calls.length = 0;
    const again = await c.connect();
    await waitUntil(() => c.calls.length >= 1, 5000, 'reconnect configuration');
    await again.call('Heartbeat', {});
    await new Promise((r) => setTimeout(r, 200));
    expect(c.calls).toEqual(['GetConfiguration']);
    expect(metering('CP-AC')?.measurands).toBe(
      'SoC,Energy.Active.Import.Register,Power.Active.Import',
    );

    // A setting changed behind the gateway's back is put right on the next boot, alone.
    c.held.set('ConnectionTimeOut', '120');
    c.calls.length = 0;
    await again.close({ force: true });
    const third = await c.connect();
    await waitUntil(() => c.calls.length === 2, 5000, 'drifted setting');
    expect(c.calls).toEqual(['GetConfiguration', 'ChangeConfiguration ConnectionTimeOut']);
    expect(c.held.get('ConnectionTimeOut')).toBe('4');
    await third.close({ force: true });
  });

  it('2.0.1: sets what the station lacks, and a reconnect is one GetVariables', async () => {
    const held = new Map<string, string>();
    const calls: string[] = [];
    type Datum = { component: { name: string }; variable: { name: string } };
    const connect = async () => {
      const cp = await rawCharger(t.gw.ocppUrl, 'CP-1', CHARGER_PASSWORD, ['ocpp2.0.1']);
      cp.handle('GetVariables', async ({ params }) => {
        calls.push('GetVariables');
        return {
          getVariableResult: (params as { getVariableData: Datum[] }).getVariableData.map((d) => {
            const value = held.get(`${d.component.name}.${d.variable.name}`);
            return value === undefined
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
      cp.handle('SetVariables', async ({ params }) => {
        const data = (params as { setVariableData: (Datum & { attributeValue: string })[] })
          .setVariableData;
        calls.push(`SetVariables ${data.length}`);
        for (const d of data) held.set(`${d.component.name}.${d.variable.name}`, d.attributeValue);
        return {
          setVariableResult: data.map((d) => ({
            attributeStatus: 'Accepted',
            component: d.component,
            variable: d.variable,
          })),
        };
      });
      await cp.call('BootNotification', {
        reason: 'PowerUp',
        chargingStation: { vendorName: 'Acme', model: 'DC150' },
      });
      return cp;
    };
    const first = await connect();
    await waitUntil(() => calls.length === 3, 5000, 'first configuration');
    expect(calls).toEqual(['GetVariables', 'SetVariables 6', 'GetVariables']);
    await first.close({ force: true });

    calls.length = 0;
    const again = await connect();
    await waitUntil(() => calls.length >= 1, 5000, 'reconnect configuration');
    await again.call('Heartbeat', {});
    await new Promise((r) => setTimeout(r, 200));
    expect(calls).toEqual(['GetVariables']);
    expect(metering('CP-1')?.measurands).toBe(MEASURANDS);
    await again.close({ force: true });
  });
});

describe('a reconnect storm', () => {
  // Boots arriving in numbers (more than SETTINGS_PACING.immediate = 8, each within quietMs of
  // the one before) have their settings read once the boots are quiet; a Start goes first. The
  // quiet is widened from 250 ms to 1 s so that a stall of a loaded test machine is no quiet.
  const QUIET_MS = 1000;
  const ids = Array.from({ length: 13 }, (_, i) => `S${String(i + 1).padStart(2, '0')}`);
  let storm: TestGateway;
  const clients: RawClient[] = [];
  beforeAll(async () => {
    storm = await startTestGateway(
      {
        chargers: ids.map((id) => ({
          id,
          passwordHash: PASSWORD_HASH,
          connectors: [{ id: '1', tariff: 'ac', maxPowerKw: 22 }],
        })),
      },
      { settingsPacing: { ...SETTINGS_PACING, quietMs: QUIET_MS } },
    );
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close({ force: true })));
    await storm.close();
  });

  it('admits every charger first, reads the settings once the boots are quiet, and a charger asked to start first', async () => {
    const token = await mintToken(storm.gw.url, API_KEY, DRIVERS.ada.email);
    const calls = new Map<string, { action: string; at: number }[]>(ids.map((id) => [id, []]));
    const readAt = (id: string) => calls.get(id)?.find((c) => c.action === 'GetConfiguration')?.at;
    const read = () => ids.slice(0, 12).filter((id) => readAt(id) !== undefined);
    const connected = await Promise.all(
      ids.map(async (id) => {
        const cp = await rawCharger(storm.gw.ocppUrl, id, CHARGER_PASSWORD);
        for (const action of ['GetConfiguration', 'RemoteStartTransaction']) {
          cp.handle(action, async () => {
            calls.get(id)?.push({ action, at: Date.now() });
            return action === 'GetConfiguration'
              ? { configurationKey: [], unknownKey: [] }
              : { status: 'Accepted' };
          });
        }
        clients.push(cp);
        return cp;
      }),
    );
    const boot = (cp: RawClient) =>
      cp.call('BootNotification', { chargePointVendor: 'Acme', chargePointModel: 'AC22' });
    await Promise.all(connected.slice(0, 12).map(boot));
    // S13 reboots every 25 ms: the storm goes on.
    let churning = true;
    let lastBootSentAt = Date.now();
    const churn = (async () => {
      while (churning) {
        lastBootSentAt = Date.now();
        await boot(connected[12]!);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();

    await waitUntil(() => read().length >= 8, 5000, 'the first boots read at once');
    await new Promise((r) => setTimeout(r, 800));
    expect(read()).toHaveLength(8);

    const waiting = ids.slice(0, 12).filter((id) => readAt(id) === undefined);
    const started = waiting[0]!;
    const res = await startSession(
      storm.gw.url,
      token,
      { chargerId: started, connectorId: '1', driverEmail: DRIVERS.ada.email },
      1_000,
    );
    expect(res.status).toBe(200);
    expect(calls.get(started)!.map((c) => c.action)).toEqual([
      'GetConfiguration',
      'RemoteStartTransaction',
    ]);
    expect(read()).toHaveLength(9);

    churning = false;
    await churn;
    await waitUntil(() => read().length === 12, 5000, 'every charger read after the storm');
    for (const id of waiting.slice(1)) {
      expect(readAt(id)! - lastBootSentAt).toBeGreaterThanOrEqual(QUIET_MS - 10);
    }
  });
});

describe('settingHeld', () => {
  const measurand = fc.constantFrom(
    'Energy.Active.Import.Register',
    'Power.Active.Import',
    'SoC',
    'Current.Import',
    'Voltage',
  );

  it('takes a measurand list written back in any order, case and spacing as the same list', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(measurand, { minLength: 2 }),
        fc.func(fc.boolean()),
        fc.array(fc.constantFrom(' ', ''), { minLength: 10, maxLength: 10 }),
        (list, upper, pads) => {
          const written = [...list]
            .reverse()
            .map((m, i) => `${pads[i % pads.length]}${upper(m) ? m.toUpperCase() : m}`)
            .join(',');
          expect(settingHeld(written, list.join(','))).toBe(true);
        },
      ),
    );
  });

  it('never takes a different list, value or a missing one as held', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(measurand, { minLength: 1 }),
        fc.uniqueArray(measurand, { minLength: 1 }),
        (a, b) => {
          const same = a.length === b.length && a.every((m) => b.includes(m));
          expect(settingHeld(a.join(','), b.join(','))).toBe(same);
        },
      ),
    );
    expect(settingHeld(null, '10')).toBe(false);
    expect(settingHeld('10.0', '10')).toBe(true);
    expect(settingHeld('11', '10')).toBe(false);
    expect(settingHeld('TRUE', 'true')).toBe(true);
    expect(settingHeld('false', 'true')).toBe(false);
    expect(settingHeld('', '0')).toBe(false);
  });
});
