import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { applySeed } from '../src/cli/offline/seed.js';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { parseConfig } from '../src/config/read-config.js';
import { openDatabase, type Db } from '../src/store/database.js';
import { Outbox } from '../src/store/outbox.js';
import { Wallet } from '../src/wallet/wallet.js';
import { Cloud } from './helpers/cloud.js';
import { API_KEY, DRIVERS, testConfig, testSeed } from './helpers/gateway.js';
import { spawnGateway, type GatewayProcess } from './helpers/gateway-process.js';
import { mintToken, startSession } from './helpers/http.js';
import { startBroker, type TestBroker } from './helpers/mqtt-broker.js';
import { IONIQ, ocpp16 } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';
import { gatewayHealth } from './helpers/operator.js';

const PREFIX = 'fleetgw/test-site/';
const BROKER_PASSWORD = 'broker-password-never-logged-0001';

let broker: TestBroker;
let dir: string;
let configPath: string;
let db: Db;
let cloud: Cloud;
const gateways: GatewayProcess[] = [];
const logLines: string[] = [];

beforeEach(async () => {
  broker = await startBroker();
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-outage-'));
  const input = testConfig(dir, {
    uplink: {
      url: broker.url,
      username: 'gateway',
      password: BROKER_PASSWORD,
      reconnectSeconds: 0.2,
    },
  });
  configPath = join(dir, 'gateway.yaml');
  writeFileSync(configPath, stringify(input));
  db = openDatabase(parseConfig(input, dir).database.path);
  applySeed(db, testSeed, new Date().toISOString());
  cloud = await Cloud.connect(broker.url, PREFIX, `cloud-${Date.now()}`);
});
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.kill()));
  await cloud.close();
  await broker.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
  logLines.length = 0;
});
afterAll(() => undefined);

async function gateway(): Promise<GatewayProcess> {
  const g = await spawnGateway(configPath, logLines);
  gateways.push(g);
  return g;
}

const depth = () =>
  (db.prepare('SELECT count(*) AS n FROM outbox WHERE sent_at IS NULL').get() as { n: number }).n;
const balance = (driverId: string) =>
  (
    db.prepare('SELECT balance FROM wallets WHERE driver_id = ?').get(driverId) as {
      balance: number;
    }
  ).balance;

/** Every outbox row reached the cloud; deduplicated by id, in seq order; nothing unknown. */
function expectDeliveredExactlyOnceInEffect(): void {
  const rows = db.prepare('SELECT id, seq, topic FROM outbox ORDER BY seq').all() as {
    id: string;
    seq: number;
    topic: string;
  }[];
  const up = cloud.received.filter((m) => ['ledger', 'sessions', 'replies'].includes(m.kind));
  const firstSeen = new Map<unknown, number>();
  for (const m of up) if (!firstSeen.has(m.body.id)) firstSeen.set(m.body.id, m.body.seq as number);
  expect([...firstSeen.keys()].sort()).toEqual(rows.map((r) => r.id).sort());
  // in order: the distinct messages, in the order they first arrived, follow the outbox order
  expect([...firstSeen.values()]).toEqual(rows.map((r) => r.seq));
  // the same id always carries the same payload
  const byId = new Map<unknown, string>();
  for (const m of up) {
    const text = JSON.stringify(m.body);
    expect(byId.get(m.body.id) ?? text).toBe(text);
    byId.set(m.body.id, text);
  }
  expect(cloud.schemaErrors).toEqual([]);
}

describe('uplink through outages (real broker, gateway as a child process)', () => {
  it("a session's ledger entries reach the cloud exactly once in effect across a broker restart and a gateway kill; a top-up sent while the gateway was down is applied once", async () => {
    let g = await gateway();
    await waitUntil(() => cloud.of('gateway').some((m) => m.online === true), 10_000, 'online');

    const cp = await ocpp16.connect(g.ocppUrl, 'CP-1');
    await cp.plugIn(1, IONIQ);
    const start = balance(DRIVERS.ada.id);
    const token = await mintToken(g.url, API_KEY, DRIVERS.ada.email);
    const started = cp.waitFor('transactionStarted', (e) => e.connectorId === 1);
    const res = await startSession(
      g.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      20_000,
    );
    expect(res.status).toBe(200);
    const { sessionId } = res.body as { sessionId: string };
    const tx = await started;
    await waitUntil(
      () => cloud.of('ledger').find((m) => (m.entry as { kind: string }).kind === 'session_debit'),
      10_000,
      'the debit upstream',
    );

    // the broker goes away; the session goes on and settles; the outbox holds what the cloud missed
    await broker.stop();
    await cp.waitFor(
      'meterValues',
      (m) => m.transactionId === tx.transactionId && m.registerWh - tx.meterStart > 1000,
    );
    await cp.interrupt(1, 'Local');
    await waitUntil(
      () => db.prepare("SELECT 1 FROM sessions WHERE id = ? AND state = 'settled'").get(sessionId),
      10_000,
      'settlement',
    );
    const health = await gatewayHealth<{
      uplink: { connected: boolean; outboxDepth: number };
    }>(g.url, db);
    expect(health.uplink.connected).toBe(false);
    expect(health.uplink.outboxDepth).toBeGreaterThan(0);
    await cp.disconnect();

    // the gateway is killed; the broker comes back; the cloud sends a top-up meanwhile
    await g.kill();
    await broker.start();
    await waitUntil(() => cloud.client.connected, 10_000, 'cloud reconnected');
    const topUp = {
      id: 'topup-while-away',
      type: 'top_up',
      driverId: DRIVERS.ada.id,
      amount: 4000,
    };
    await cloud.command(topUp);

    g = await gateway();
    await cloud.reply(topUp.id, 'applied', 15_000);
    await cloud.command(topUp); // the cloud retries: nothing changes
    await cloud.reply(topUp.id, 'duplicate');
    await waitUntil(() => depth() === 0, 10_000, 'outbox drained');

    const session = db.prepare('SELECT cost FROM sessions WHERE id = ?').get(sessionId) as {
      cost: number;
    };
    expect(balance(DRIVERS.ada.id)).toBe(start - session.cost + 4000);
    expect(
      db
        .prepare(
          "SELECT count(*) AS n FROM ledger_entries WHERE reference = 'cmd:topup-while-away'",
        )
        .get(),
    ).toEqual({ n: 1 });
    const sessionEntries = db
      .prepare('SELECT id, kind FROM ledger_entries WHERE session_id = ? ORDER BY seq')
      .all(sessionId) as { id: string; kind: string }[];
    expect(sessionEntries.map((e) => e.kind)).toEqual(['session_debit', 'session_credit']);
    const upstream = cloud
      .distinct('ledger')
      .map((m) => m.entry as { id: string; sessionId: string });
    expect(upstream.filter((e) => e.sessionId === sessionId).map((e) => e.id)).toEqual(
      sessionEntries.map((e) => e.id),
    );
    const states = cloud
      .distinct('sessions')
      .filter((m) => m.sessionId === sessionId)
      .map((m) => m.state);
    // 'authorized' is skipped when the charger's start overtakes its reply to the remote start.
    expect(states.filter((st) => st !== 'authorized')).toEqual([
      'authorizing',
      'charging',
      'settled',
    ]);
    expect(states).toEqual(
      ['authorizing', 'authorized', 'charging', 'settled'].filter((st) => states.includes(st)),
    );
    expectDeliveredExactlyOnceInEffect();
    expect(verifyLedger(db).ok).toBe(true);
    expect(logLines.join('\n')).not.toContain(BROKER_PASSWORD);
    expect(
      logLines.some((l) => l.includes('"uplink disconnected') && l.includes('"outboxDepth"')),
    ).toBe(true);
  });

  it('killed mid-publish with a backlog, then a flood of commands: nothing lost, nothing applied twice, drained in order', async () => {
    // a long broker outage's backlog: 1500 ledger entries waiting in the outbox
    const wallet = new Wallet(db, new Outbox(db));
    db.transaction(() => {
      for (let i = 0; i < 1500; i++)
        wallet.credit(DRIVERS.bola.id, 'top_up', 1, `backlog-${i}`, new Date().toISOString());
    })();
    const before = balance(DRIVERS.ada.id);

    // Killed from the handler that receives the 100th entry: a poll let a fast machine publish
    // all 1500 before the kill (CI, stop 24).
    let killed: Promise<void> | undefined;
    let g = await gateway();
    cloud.onReceived('ledger', 100, () => (killed = g.kill()));
    await waitUntil(() => killed !== undefined, 15_000, 'publishing under way');
    await killed; // mid-publish
    const sentBeforeKill = 1500 - depth();
    expect(sentBeforeKill).toBeLessThan(1500);

    // while it is away the cloud sends a flood of commands (queued by the broker)
    const flood = Array.from({ length: 300 }, (_, i) => ({
      id: `flood-${i}`,
      type: 'top_up',
      driverId: DRIVERS.ada.id,
      amount: 10,
    }));
    for (const c of flood) await cloud.command(c);

    g = await gateway();
    await waitUntil(
      () => flood.every((c) => cloud.of('replies').some((r) => r.commandId === c.id)),
      30_000,
      'every flood command answered',
    );
    // and the flood again, as a cloud that retries everything would
    for (const c of flood.slice(0, 50)) await cloud.command(c);
    await waitUntil(
      () => cloud.of('replies').filter((r) => r.status === 'duplicate').length >= 50,
      15_000,
      'duplicates answered',
    );
    await waitUntil(() => depth() === 0, 15_000, 'outbox drained');

    expect(balance(DRIVERS.ada.id)).toBe(before + 300 * 10);
    expect(
      db
        .prepare("SELECT count(*) AS n FROM ledger_entries WHERE reference LIKE 'cmd:flood-%'")
        .get(),
    ).toEqual({ n: 300 });
    expect(db.prepare('SELECT count(*) AS n FROM uplink_commands').get()).toEqual({ n: 300 });
    expectDeliveredExactlyOnceInEffect();
    expect(verifyLedger(db).ok).toBe(true);
  });
});
