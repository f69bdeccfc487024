import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChargePoint16 } from '../simulators/ocpp16/charge-point.js';
import type { ChargePoint201 } from '../simulators/ocpp201/charge-point.js';
import type { FrameEvent } from '../simulators/shared/events.js';
import { IdTokenStore } from '../src/id-tokens/id-token-store.js';
import { assertSchemaValid } from './helpers/ocpp-schemas.js';
import { DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import {
  bootedCharger,
  IONIQ,
  PROTOCOLS,
  type SimulatedChargePoint,
} from './helpers/simulated-charger.js';
import { TcpLink } from './helpers/tcp-link.js';
import { adjustWallet, bindCard } from './helpers/local-lists.js';
import { waitUntil } from './helpers/wait.js';

const MINIMUM = 2_000;

const CARDS = {
  ada: '04A1B2C3D4',
  bola: '04B0B0B0B0',
  gone: '04DEADBEEF',
  blocked: '04BADBAD00',
  expired: '04E0E0E0E0',
  late: '04ADDED001',
};

/** The SendLocalList frames a simulator received, parsed, checked against the official schema. */
function listFrames(cp: SimulatedChargePoint, protocol: 'ocpp1.6' | 'ocpp2.0.1') {
  const seen: Record<string, unknown>[] = [];
  cp.on('frame', ({ direction, message }: FrameEvent) => {
    if (direction !== 'in') return;
    const frame = JSON.parse(message) as unknown[];
    if (frame[0] !== 2 || frame[2] !== 'SendLocalList') return;
    const params = frame[3] as Record<string, unknown>;
    assertSchemaValid(protocol, 'SendLocalList', params);
    seen.push(params);
  });
  return seen;
}

const statuses = (cp: SimulatedChargePoint) =>
  Object.fromEntries(cp.localList.snapshot().map((e) => [e.token, e.status]));

describe.each(PROTOCOLS)('local lists and the cache: $name', (protocol) => {
  const version = protocol.name.includes('1.6') ? 'ocpp1.6' : 'ocpp2.0.1';
  let t: TestGateway;
  let cp: SimulatedChargePoint | undefined;
  let link: TcpLink | undefined;

  beforeEach(async () => {
    t = await startTestGateway({
      // The tap minimum decides the lists; offline starts ask no more of a wallet here.
      taps: { default: { amount: MINIMUM, minimum: MINIMUM, offline: { minBalance: 0 } } },
      localLists: {
        offlineStarts: true,
        pollSeconds: 0.1,
        retrySeconds: 0.2,
      },
    });
    const db = t.gw.db;
    bindCard(db, DRIVERS.ada.id, CARDS.ada);
    bindCard(db, DRIVERS.bola.id, CARDS.bola);
    bindCard(db, DRIVERS.gone.id, CARDS.gone);
    const blocked = bindCard(db, DRIVERS.ada.id, CARDS.blocked);
    new IdTokenStore(db).setBlocked(blocked.id, 'lost', new Date().toISOString());
    bindCard(db, DRIVERS.ada.id, CARDS.expired, { expiresAt: '2020-01-01T00:00:00.000Z' });
  });

  afterEach(async () => {
    await cp?.disconnect();
    cp = undefined;
    await link?.cut();
    link = undefined;
    await t.close();
  });

  it('sends the payable cards Accepted and the others Blocked, differentially as wallets change, whole after a reboot', async () => {
    cp = await bootedCharger(protocol, t.gw, 'CP-1');
    const frames = listFrames(cp, version);
    const charger = cp;
    await waitUntil(() => charger.localList.size === 4, 10_000, 'the first list');
    expect(statuses(charger)).toEqual({
      [CARDS.ada]: 'Accepted',
      [CARDS.bola]: 'Accepted',
      [CARDS.gone]: 'Blocked', // the driver is inactive
      [CARDS.blocked]: 'Blocked',
    });
    const first = charger.localList.version;
    expect(first).toBeGreaterThan(0);
    // The cache is off and offline starts follow the operator's choice.
    expect(settingsOf(charger)).toEqual({ cache: 'false', offline: 'true', list: 'true' });

    // Bola's wallet drops below the tap minimum: her card goes Blocked, one differential update.
    adjustWallet(t.gw.db, DRIVERS.bola.id, -(DRIVERS.bola.balance - MINIMUM + 1));
    await waitUntil(() => statuses(charger)[CARDS.bola] === 'Blocked', 5000, 'bola blocked');
    // A new card, bound later, is added in a differential update too.
    bindCard(t.gw.db, DRIVERS.ada.id, CARDS.late);
    await waitUntil(() => statuses(charger)[CARDS.late] === 'Accepted', 5000, 'late card');
    expect(frames.map((f) => f.updateType)).toEqual(['Full', 'Differential', 'Differential']);
    expect(charger.localList.version).toBe(first + 2);

    // Money comes back: Accepted again.
    adjustWallet(t.gw.db, DRIVERS.bola.id, 5_000);
    await waitUntil(() => statuses(charger)[CARDS.bola] === 'Accepted', 5000, 'bola accepted');

    // A reboot: the whole list, whatever version the charger says it holds.
    await charger.disconnect();
    frames.length = 0;
    await charger.connect();
    await waitUntil(() => frames.some((f) => f.updateType === 'Full'), 10_000, 'a full update');
    expect(charger.localList.size).toBe(5);
    const held = () =>
      t.gw.db
        .prepare('SELECT version, full_wanted FROM local_lists WHERE charger_id = ?')
        .get('CP-1') as { version: number; full_wanted: number };
    await waitUntil(() => held().full_wanted === 0, 5000, 'the full update recorded');
    expect(held().version).toBe(charger.localList.version);
  });

  it("a charger whose list is not the gateway's gets the whole list on reconnect; offline it starts a listed card, refuses a blocked one, and reports the start when back", async () => {
    link = await TcpLink.open(t.gw.port);
    const url = t.gw.ocppUrl.replace(`:${t.gw.port}/`, `:${link.port}/`);
    cp = await bootedCharger(protocol, { ocppUrl: url, db: t.gw.db }, 'CP-1');
    const charger = cp;
    await waitUntil(() => charger.localList.size === 4, 10_000, 'the first list');
    const frames = listFrames(charger, version);
    await charger.plugIn(1, IONIQ);
    await link.cut();
    await waitUntil(() => !t.gw.chargers.isOnline('CP-1'), 5000, 'the gateway sees it offline');
    // Someone else changed the charger's list: the versions differ at the next connection.
    charger.localList.apply('Full', 78, [
      { token: CARDS.ada, type: 'ISO14443', status: 'Accepted' },
      { token: CARDS.blocked, type: 'ISO14443', status: 'Blocked' },
      { token: 'STRANGER', type: 'ISO14443', status: 'Accepted' },
    ]);
    expect(await charger.startOffline(1, CARDS.blocked)).toBe('Blocked');
    expect(await charger.startOffline(1, 'NOT-LISTED')).toBe('Unknown');
    const started: string[] = [];
    charger.on('frame', ({ direction, message }: FrameEvent) => {
      const frame = JSON.parse(message) as unknown[];
      if (direction !== 'out' || frame[0] !== 2) return;
      const params = frame[3] as Record<string, unknown>;
      if (frame[2] === 'StartTransaction') started.push(String(params.idTag));
      if (frame[2] === 'TransactionEvent' && params.eventType === 'Started') {
        expect(params.offline).toBe(true);
        started.push((params.idToken as { idToken: string }).idToken);
      }
    });
    expect(await charger.startOffline(1, CARDS.ada.toLowerCase())).toBe('Accepted');
    expect(charger.state(1).transactionId).toBeDefined();
    await link.restore();
    await waitUntil(() => started.includes(CARDS.ada.toLowerCase()), 30_000, 'the start reported');
    expect(started).toEqual([CARDS.ada.toLowerCase()]);
    // The gateway heard it (whether it pays is the tap's rule, not the list's).
    const sql =
      version === 'ocpp1.6'
        ? 'SELECT id_tag AS token FROM ocpp16_transactions WHERE charger_id = ?'
        : 'SELECT id_token AS token FROM ocpp201_transactions WHERE charger_id = ?';
    await waitUntil(
      () => t.gw.db.prepare(sql).all('CP-1').length === 1,
      5000,
      'the gateway records the offline start',
    );
    expect(t.gw.db.prepare(sql).all('CP-1')).toEqual([{ token: CARDS.ada.toLowerCase() }]);
    await waitUntil(() => frames.some((f) => f.updateType === 'Full'), 10_000, 'a full update');
    await waitUntil(() => charger.localList.size === 4, 5000, 'the list restored');
    expect(statuses(charger)).not.toHaveProperty('STRANGER');
  });
});

/** What the charger itself holds of the settings the gateway asked for. */
function settingsOf(cp: SimulatedChargePoint) {
  if (cp instanceof ChargePoint16) {
    const c = cp.configuration;
    return {
      cache: c.get('AuthorizationCacheEnabled'),
      offline: c.get('LocalAuthorizeOffline'),
      list: c.get('LocalAuthListEnabled'),
    };
  }
  const m = (cp as ChargePoint201).deviceModel;
  return {
    cache: m.get('AuthCacheCtrlr', 'Enabled'),
    offline: m.get('AuthCtrlr', 'LocalAuthorizeOffline'),
    list: m.get('LocalAuthListCtrlr', 'Enabled'),
  };
}
