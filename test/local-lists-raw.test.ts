import { afterEach, describe, expect, it } from 'vitest';
import {
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { assertSchemaValid } from './helpers/ocpp-schemas.js';
import { configurationAnswer, rawCharger, type RawClient } from './helpers/raw-charger.js';
import { adjustWallet, bindCard } from './helpers/local-lists.js';
import { waitUntil } from './helpers/wait.js';

const MINIMUM = 2_000;

interface Seen {
  method: string;
  params: Record<string, unknown>;
}

/**
 * A 1.6 charger with a small list (3 entries, 2 per message) and a cache it cannot turn off
 * (AuthorizationCacheEnabled read-only), answering SendLocalList with `listAnswers` in turn
 * (then Accepted).
 */
async function smallListCharger(t: TestGateway, listAnswers: string[]) {
  const held = new Map([
    ['SupportedFeatureProfiles', 'Core,LocalAuthListManagement'],
    ['LocalAuthListEnabled', 'true'],
    ['LocalAuthListMaxLength', '3'],
    ['SendLocalListMaxLength', '2'],
    ['LocalAuthorizeOffline', 'true'],
    ['AuthorizationCacheEnabled', 'true'],
  ]);
  const seen: Seen[] = [];
  let listVersion = 0;
  const cp = await rawCharger(t.gw.ocppUrl, 'CP-1', CHARGER_PASSWORD, ['ocpp1.6']);
  const record = (method: string) => (params: unknown) => {
    assertSchemaValid('ocpp1.6', method, params);
    seen.push({ method, params: params as Record<string, unknown> });
  };
  cp.handle('GetConfiguration', async ({ params }) => configurationAnswer(held, params));
  cp.handle('ChangeConfiguration', async ({ params }) => {
    const { key, value } = params as { key: string; value: string };
    record('ChangeConfiguration')(params);
    if (key === 'AuthorizationCacheEnabled') return { status: 'Rejected' };
    held.set(key, value);
    return { status: 'Accepted' };
  });
  cp.handle('ClearCache', async ({ params }) => {
    record('ClearCache')(params);
    return { status: 'Accepted' };
  });
  cp.handle('GetLocalListVersion', async ({ params }) => {
    record('GetLocalListVersion')(params);
    return { listVersion };
  });
  cp.handle('SendLocalList', async ({ params }) => {
    record('SendLocalList')(params);
    const status = listAnswers.shift() ?? 'Accepted';
    if (status === 'Accepted') listVersion = (params as { listVersion: number }).listVersion;
    return { status };
  });
  await cp.call('BootNotification', { chargePointVendor: 'Acme', chargePointModel: 'AC22' });
  return { cp, seen, held };
}

const lists = (seen: Seen[]) =>
  seen
    .filter((s) => s.method === 'SendLocalList')
    .map((s) => ({
      type: s.params.updateType,
      version: s.params.listVersion,
      tags: (
        (s.params.localAuthorizationList ?? []) as {
          idTag: string;
          idTagInfo?: { status: string };
        }[]
      ).map((e) => `${e.idTag}:${e.idTagInfo?.status ?? 'removed'}`),
    }));

describe('local lists against raw chargers', () => {
  let t: TestGateway;
  let cp: RawClient | undefined;

  afterEach(async () => {
    await cp?.close({ force: true });
    cp = undefined;
    await t.close();
  });

  it("1.6: a list cut to the charger's bounds, Accepted first; a cache it cannot turn off is cleared when a card can no longer pay; a failed update is retried whole", async () => {
    t = await startTestGateway({
      // The tap minimum decides the lists; offline starts ask no more of a wallet here.
      taps: { default: { amount: MINIMUM, minimum: MINIMUM, offline: { minBalance: 0 } } },
      localLists: {
        offlineStarts: true,
        pollSeconds: 0.1,
        retrySeconds: 0.3,
      },
    });
    const db = t.gw.db;
    bindCard(db, DRIVERS.ada.id, 'A1');
    bindCard(db, DRIVERS.ada.id, 'A2');
    bindCard(db, DRIVERS.bola.id, 'B1');
    bindCard(db, DRIVERS.gone.id, 'G1');
    bindCard(db, DRIVERS.gone.id, 'G2');
    const charger = await smallListCharger(t, ['Failed']);
    cp = charger.cp;
    const { seen } = charger;
    await waitUntil(() => lists(seen).length === 3, 10_000, 'the list, after one failure');
    expect(lists(seen)).toEqual([
      { type: 'Full', version: 1, tags: ['A1:Accepted', 'A2:Accepted'] },
      // Failed: what the charger holds is not known, so the whole list again, after a wait.
      { type: 'Full', version: 1, tags: ['A1:Accepted', 'A2:Accepted'] },
      // Three fit: the Accepted ones first; G1 and G2 (an inactive driver) are left out.
      { type: 'Differential', version: 2, tags: ['B1:Accepted'] },
    ]);
    // The cache stays on (read-only) and so offline starts stay off: the list would not be the
    // charger's only authority offline.
    const changes = seen
      .filter((s) => s.method === 'ChangeConfiguration' && /Auth/.test(String(s.params.key)))
      .map((s) => s.params);
    expect(changes).toEqual([
      { key: 'AuthorizationCacheEnabled', value: 'false' },
      { key: 'LocalAuthorizeOffline', value: 'false' },
    ]);
    const clears = () => seen.filter((s) => s.method === 'ClearCache').length;
    expect(clears()).toBe(1); // once when first prepared

    // Bola cannot pay a tap any more: her card goes Blocked and every cache is cleared.
    adjustWallet(db, DRIVERS.bola.id, -(DRIVERS.bola.balance - 1));
    await waitUntil(() => clears() === 2, 5000, 'the cache cleared');
    await waitUntil(() => lists(seen).length === 4, 5000, 'the differential update');
    expect(lists(seen)[3]).toEqual({ type: 'Differential', version: 3, tags: ['B1:Blocked'] });
    // A top-up (nothing lost) clears nothing.
    adjustWallet(db, DRIVERS.bola.id, 10_000);
    await waitUntil(() => lists(seen).length === 5, 5000, 'accepted again');
    expect(clears()).toBe(2);
  });

  it('2.0.1: a station without a local list or a cache is sent neither', async () => {
    t = await startTestGateway({ localLists: { pollSeconds: 0.1 } });
    bindCard(t.gw.db, DRIVERS.ada.id, 'A1');
    const methods: string[] = [];
    cp = await rawCharger(t.gw.ocppUrl, 'CP-1', CHARGER_PASSWORD, ['ocpp2.0.1']);
    type Datum = { component: { name: string }; variable: { name: string } };
    cp.handle(async ({ method, params }) => {
      methods.push(String(method));
      if (method !== 'GetVariables') return { status: 'Accepted' };
      return {
        getVariableResult: (params as { getVariableData: Datum[] }).getVariableData.map((d) => ({
          attributeStatus: 'UnknownComponent',
          component: d.component,
          variable: d.variable,
        })),
      };
    });
    await cp.call('BootNotification', {
      reason: 'PowerUp',
      chargingStation: { vendorName: 'Acme', model: 'DC150' },
    });
    const prepared = () =>
      t.logLines.some(
        (l) => l.includes('local authorization prepared') && l.includes('"listSupported":false'),
      );
    await waitUntil(prepared, 5000, 'the station asked');
    await new Promise((r) => setTimeout(r, 500)); // five more rounds
    expect(methods.filter((m) => /LocalList|ClearCache/.test(m))).toEqual([]);
  });
});
