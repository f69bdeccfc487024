import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/shared/log.js';
import { Retention } from '../src/store/retention.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { Cloud } from './helpers/cloud.js';
import { mintToken, post, quote } from './helpers/http.js';
import { startBroker, type TestBroker } from './helpers/mqtt-broker.js';
import { ocpp16 } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';
import { gatewayHealth } from './helpers/operator.js';

const PREFIX = 'fleetgw/test-site/';
let broker: TestBroker;
let t: TestGateway;
let cloud: Cloud;

beforeAll(async () => {
  broker = await startBroker();
  t = await startTestGateway({ uplink: { url: broker.url, reconnectSeconds: 0.2 } });
  cloud = await Cloud.connect(broker.url, PREFIX);
  await waitUntil(
    () => cloud.of('gateway').some((g) => g.online === true),
    10_000,
    'gateway online',
  );
});
afterAll(async () => {
  await cloud?.close();
  await t?.close();
  await broker?.close();
});

const balance = (driverId: string) =>
  (
    t.gw.db.prepare('SELECT balance FROM wallets WHERE driver_id = ?').get(driverId) as {
      balance: number;
    }
  ).balance;

/** Everything a rejected command must leave as it was. */
function snapshot(): unknown {
  const all = (sql: string) => t.gw.db.prepare(sql).all();
  return {
    wallets: all('SELECT * FROM wallets ORDER BY driver_id'),
    ledger: all('SELECT * FROM ledger_entries ORDER BY seq'),
    drivers: all('SELECT * FROM drivers ORDER BY id'),
    fleets: all('SELECT * FROM fleets ORDER BY id'),
    keys: all('SELECT * FROM api_keys ORDER BY key_hash'),
    revocations: all('SELECT * FROM api_key_revocations ORDER BY key_hash'),
    telematics: all('SELECT * FROM driver_telematics ORDER BY driver_id'),
    commands: all('SELECT * FROM uplink_commands ORDER BY id'),
  };
}

describe('uplink commands (down, exactly once in effect)', () => {
  it('top-up: applied once with its ledger entry; the same id again is a duplicate', async () => {
    const before = balance(DRIVERS.ada.id);
    await cloud.command({
      id: 'cmd-top-1',
      type: 'top_up',
      driverId: DRIVERS.ada.id,
      amount: 2500,
    });
    const reply = await cloud.reply('cmd-top-1', 'applied');
    expect(reply.result).toMatchObject({ amount: 2500, balanceAfter: before + 2500 });
    await cloud.command({
      id: 'cmd-top-1',
      type: 'top_up',
      driverId: DRIVERS.ada.id,
      amount: 2500,
    });
    const dup = await cloud.reply('cmd-top-1', 'duplicate');
    expect(dup.result).toEqual(reply.result);
    expect(balance(DRIVERS.ada.id)).toBe(before + 2500);
    const entries = t.gw.db
      .prepare(
        "SELECT kind, amount, reference FROM ledger_entries WHERE reference = 'cmd:cmd-top-1'",
      )
      .all();
    expect(entries).toEqual([{ kind: 'top_up', amount: 2500, reference: 'cmd:cmd-top-1' }]);
    // the entry went up on the ledger topic, before the reply (outbox order)
    const ledger = await waitUntil(
      () =>
        cloud
          .of('ledger')
          .find((m) => (m.entry as { reference: string }).reference === 'cmd:cmd-top-1'),
      5000,
      'ledger entry',
    );
    expect(ledger.seq as number).toBeLessThan(reply.seq as number);
  });

  it('a top-up or adjustment redelivered after retention pruned its id is answered duplicate from the ledger; the next command still flows', async () => {
    const before = balance(DRIVERS.ada.id);
    const commands = [
      { id: 'cmd-late-top', type: 'top_up', driverId: DRIVERS.ada.id, amount: 800 },
      {
        id: 'cmd-late-adj',
        type: 'adjustment',
        driverId: DRIVERS.ada.id,
        amount: -300,
        reason: 'late redelivery',
      },
    ];
    const first = [];
    for (const c of commands) {
      await cloud.command(c);
      first.push((await cloud.reply(c.id, 'applied')).result);
    }
    // the real pruning, retention.uplinkCommandsDays (30) later: the ids go, the ledger stays
    const later = new Retention({
      db: t.gw.db,
      clock: { now: () => t.clock.now() + 31 * 86_400_000 },
      log: createLogger('silent'),
      windows: {
        ocppEventsDays: 0,
        transactionEventsDays: 0,
        idempotencyKeysDays: 0,
        uplinkCommandsDays: 30,
        alertsDays: 0,
        alertDeliveriesDays: 0,
      },
      batchRows: 1000,
      intervalMs: 60_000,
    });
    expect((await later.pruneAll()).uplinkCommandsDays).toBeGreaterThanOrEqual(2);
    // a bridge link down since before the PUBACK (or a cloud that retries) delivers them again
    for (const [i, c] of commands.entries()) {
      await cloud.command(c);
      expect((await cloud.reply(c.id, 'duplicate', 5000)).result).toEqual(first[i]);
    }
    expect(balance(DRIVERS.ada.id)).toBe(before + 800 - 300);
    await cloud.command({
      id: 'cmd-late-next',
      type: 'top_up',
      driverId: DRIVERS.ada.id,
      amount: 1,
    });
    await cloud.reply('cmd-late-next', 'applied', 5000);
    expect(balance(DRIVERS.ada.id)).toBe(before + 800 - 300 + 1);
  });

  it('adjustment: debit within the balance applies; an overdraft is rejected and changes nothing', async () => {
    const before = balance(DRIVERS.bola.id);
    await cloud.command({
      id: 'cmd-adj-1',
      type: 'adjustment',
      driverId: DRIVERS.bola.id,
      amount: -1000,
      reason: 'duplicate top-up reversed',
    });
    await cloud.reply('cmd-adj-1', 'applied');
    expect(balance(DRIVERS.bola.id)).toBe(before - 1000);

    const snap = snapshot();
    await cloud.command({
      id: 'cmd-adj-2',
      type: 'adjustment',
      driverId: DRIVERS.bola.id,
      amount: -(before - 1000 + 1),
      reason: 'too much',
    });
    const r = await cloud.reply('cmd-adj-2', 'rejected');
    expect(r.reason).toBe('insufficient_balance');
    expect(snapshot()).toEqual(snap);
  });

  it('invalid commands are rejected with a reason and change nothing', async () => {
    const snap = snapshot();
    const bad: [string | Record<string, unknown>, string, string | null][] = [
      ['{not json', 'invalid_json', null],
      [
        { id: 'bad-1', type: 'top_up', driverId: DRIVERS.ada.id, amount: 10.5 },
        'invalid_command',
        'bad-1',
      ],
      [
        { id: 'bad-2', type: 'top_up', driverId: DRIVERS.ada.id, amount: '100' },
        'invalid_command',
        'bad-2',
      ],
      [
        { id: 'bad-3', type: 'top_up', driverId: DRIVERS.ada.id, amount: 5, extra: 1 },
        'invalid_command',
        'bad-3',
      ],
      [{ id: 'bad-4', type: 'launch_rocket' }, 'invalid_command', 'bad-4'],
      [
        { id: 'bad-5', type: 'top_up', driverId: 'drv-nobody', amount: 5 },
        'driver_not_found',
        'bad-5',
      ],
      [
        { id: 'bad-6', type: 'adjustment', driverId: DRIVERS.ada.id, amount: 0, reason: 'x' },
        'invalid_command',
        'bad-6',
      ],
      [
        {
          id: 'bad-7',
          type: 'driver_upsert',
          driverId: 'drv-new',
          fleetId: 'fleet-zz',
          email: 'a@b.c',
        },
        'fleet_not_found',
        'bad-7',
      ],
      [
        {
          id: 'bad-8',
          type: 'driver_upsert',
          driverId: 'drv-x',
          fleetId: 'fleet-a',
          email: DRIVERS.ada.email,
        },
        'email_taken',
        'bad-8',
      ],
      [
        {
          id: 'bad-9',
          type: 'driver_upsert',
          driverId: DRIVERS.other.id,
          fleetId: 'fleet-a',
          email: 'o@x.y',
        },
        'driver_in_other_fleet',
        'bad-9',
      ],
      [{ id: 'bad-10', type: 'api_key_rotate', fleetId: 'fleet-a' }, 'invalid_command', 'bad-10'],
      [
        {
          id: 'bad-11',
          type: 'api_key_rotate',
          fleetId: 'fleet-a',
          revokeKeyHashes: ['0'.repeat(64)],
        },
        'api_key_not_found',
        'bad-11',
      ],
      [
        {
          id: 'bad-12',
          type: 'telematics_soc',
          driverId: DRIVERS.ada.id,
          socPercent: 101,
          measuredAt: '2026-01-01T00:00:00Z',
        },
        'invalid_command',
        'bad-12',
      ],
    ];
    const marker = cloud.of('replies').length;
    for (const [command] of bad) await cloud.command(command);
    await waitUntil(() => cloud.of('replies').length >= marker + bad.length, 10_000, 'replies');
    const replies = cloud.of('replies').slice(marker);
    expect(replies.map((r) => [r.reason, r.commandId])).toEqual(
      bad.map(([, reason, id]) => [reason, id]),
    );
    for (const r of replies) {
      expect(r.status).toBe('rejected');
      expect(typeof r.message).toBe('string');
    }
    expect(snapshot()).toEqual(snap);
  });

  it('roster: add a fleet and a driver, assign a vehicle, deactivate; the driver can then not mint', async () => {
    const cmds = [
      { id: 'r-1', type: 'fleet_upsert', fleetId: 'fleet-c', name: 'Fleet C' },
      {
        id: 'r-2',
        type: 'driver_upsert',
        driverId: 'drv-chi',
        fleetId: 'fleet-c',
        email: ' Chi@Fleet-C.test ',
      },
      {
        id: 'r-3',
        type: 'vehicle_assign',
        driverId: 'drv-chi',
        vehicle: { model: 'BYD Atto 3', batteryKwh: 60.5 },
      },
      { id: 'r-4', type: 'top_up', driverId: 'drv-chi', amount: 7000 },
    ];
    for (const c of cmds) await cloud.command(c);
    await cloud.reply('r-4', 'applied');
    expect(t.gw.db.prepare("SELECT * FROM drivers WHERE id = 'drv-chi'").get()).toMatchObject({
      fleet_id: 'fleet-c',
      email: 'chi@fleet-c.test',
      active: 1,
      vehicle_model: 'BYD Atto 3',
      vehicle_battery_wh: 60_500,
    });
    expect(balance('drv-chi')).toBe(7000);

    // a new API key for fleet C arrives by hash; the driver can mint with it
    const key = 'fgk_fleet_c_rotated_key_000000000000001';
    const hash = createHash('sha256').update(key).digest('hex');
    await cloud.command({
      id: 'r-5',
      type: 'api_key_rotate',
      fleetId: 'fleet-c',
      addKeyHash: hash,
      label: 'v2',
    });
    await cloud.reply('r-5', 'applied');
    await mintToken(t.gw.url, key, 'chi@fleet-c.test');

    await cloud.command({ id: 'r-6', type: 'driver_deactivate', driverId: 'drv-chi' });
    await cloud.reply('r-6', 'applied');
    const res = await post(
      t.gw.url,
      '/v1/driver-tokens',
      { driverEmail: 'chi@fleet-c.test' },
      {
        authorization: `ApiKey ${key}`,
      },
    );
    expect(res.status).toBe(404);
  });

  it('API key rotation: the old key works during the overlap and is refused after it', async () => {
    const newKey = 'fgk_fleet_a_rotated_key_000000000000002';
    const sha = (k: string) => createHash('sha256').update(k).digest('hex');
    await cloud.command({
      id: 'rot-1',
      type: 'api_key_rotate',
      fleetId: 'fleet-a',
      addKeyHash: sha(newKey),
      revokeKeyHashes: [sha(API_KEY)],
      revokeAfterSeconds: 600,
    });
    const r = await cloud.reply('rot-1', 'applied');
    expect(r.result).toMatchObject({ added: true, revoked: 1 });
    await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email); // still inside the overlap
    await mintToken(t.gw.url, newKey, DRIVERS.ada.email);
    t.clock.advance(601_000);
    const old = await post(
      t.gw.url,
      '/v1/driver-tokens',
      { driverEmail: DRIVERS.ada.email },
      {
        authorization: `ApiKey ${API_KEY}`,
      },
    );
    expect(old.status).toBe(401);
    await mintToken(t.gw.url, newKey, DRIVERS.ada.email);
  });

  it('telematics SoC is quoted when the charger reports none, with socSource telematics', async () => {
    const cp = await ocpp16.connect(t.gw.ocppUrl, 'CP-AC', { connectors: 1 });
    try {
      await waitUntil(
        () =>
          t.gw.db
            .prepare(
              "SELECT 1 FROM charger_info WHERE charger_id = 'CP-AC' AND booted_at IS NOT NULL",
            )
            .get(),
        5000,
        'boot',
      );
      const measuredAt = new Date(t.clock.now() - 60_000).toISOString();
      await cloud.command({
        id: 'tel-1',
        type: 'telematics_soc',
        driverId: DRIVERS.ada.id,
        socPercent: 40,
        measuredAt,
      });
      await cloud.reply('tel-1', 'applied');
      // an older reading replayed late does not replace the newer one
      await cloud.command({
        id: 'tel-0',
        type: 'telematics_soc',
        driverId: DRIVERS.ada.id,
        socPercent: 10,
        measuredAt: new Date(t.clock.now() - 3_600_000).toISOString(),
      });
      expect((await cloud.reply('tel-0', 'applied')).result).toEqual({ stored: false });
      const newKey = 'fgk_fleet_a_rotated_key_000000000000002';
      const token = await mintToken(t.gw.url, newKey, DRIVERS.ada.email);
      const target = { chargerId: 'CP-AC', connectorId: '1', driverEmail: DRIVERS.ada.email };
      const q = await quote(t.gw.url, token, target);
      expect(q.status).toBe(200);
      expect(q.body).toMatchObject({
        socSource: 'telematics',
        socPercent: 40,
        socReportedAt: measuredAt,
      });
      t.clock.advance(3_600_000); // older than uplink.telematicsMaxAgeMinutes: not used
      const token2 = await mintToken(t.gw.url, newKey, DRIVERS.ada.email);
      const stale = await quote(t.gw.url, token2, target);
      expect(stale.body).toMatchObject({ socSource: 'unknown', socPercent: 0 });
    } finally {
      await cp.disconnect();
    }
  });

  it('charger and connector status go up retained; every payload matches its JSON Schema', async () => {
    await waitUntil(() => cloud.received.find((m) => m.kind === 'status/CP-AC/1'), 5000, 'status');
    const late = await Cloud.connect(broker.url, PREFIX, 'late-subscriber');
    try {
      const retained = await waitUntil(
        () => late.received.find((m) => m.kind === 'status/CP-AC/1' && m.retain),
        5000,
        'retained status',
      );
      expect(retained.body).toMatchObject({ chargerId: 'CP-AC', connectorId: '1' });
    } finally {
      await late.client.endAsync(true);
    }
    for (const kind of ['ledger', 'replies', 'gateway'])
      expect(cloud.of(kind).length).toBeGreaterThan(0);
    expect(cloud.schemaErrors).toEqual([]);
    const health = await gatewayHealth<{ uplink: unknown }>(t.gw.operatorUrl, t.gw.db);
    expect(health.uplink).toMatchObject({ enabled: true, connected: true });
  });
});

void CHARGER_PASSWORD;
