import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyLedger, type LedgerReport } from '../../src/cli/offline/verify-ledger.js';
import { openDatabase, type Db } from '../../src/store/database.js';
import { Cloud, type Received } from '../helpers/cloud.js';
import { gatewayFiles } from '../helpers/crash-run.js';
import { API_KEY, DRIVERS, testConfig } from '../helpers/gateway.js';
import { spawnGateway, type GatewayProcess } from '../helpers/gateway-process.js';
import { bearer, errorCode, mintToken, post, type JsonResponse } from '../helpers/http.js';
import { freePort, startBroker, type TestBroker } from '../helpers/mqtt-broker.js';
import {
  remoteStartOf,
  type RawProtocol,
  type RawStation,
  type StationTx,
} from '../helpers/raw-stations.js';
import { waitUntil } from '../helpers/wait.js';
import { mountPowerCutFs, type CutCounts, type PowerCutFs } from './powercut-fs.js';

/**
 * One paid session on a gateway whose data folder is on powercut-fs, cut at one moment: the
 * gateway SIGKILLed right after the world was told something (an HTTP answer, a CALLRESULT, an
 * MQTT message), then every write it had not synced dropped. What survived (the image) is read
 * from a copy; then the gateway starts again on the same folder, the charger reconnects and the
 * session is driven to its end. The test holds the image to what was told before the cut.
 */

/** The moments of a paid session, in order; a run is cut right after one of them. */
export const MOMENTS = [
  'top-up applied', // the cloud got the `applied` reply to its top_up command
  'start refused', // a Start on connector 2, whose remote start the charger refused, answered 409
  'start answered', // POST /v1/sessions answered 200
  'transaction started', // StartTransaction / TransactionEvent Started answered
  'sample answered', // a sample below the paid energy answered
  'paid energy reached', // the sample at the paid energy answered
  'stop answered', // StopTransaction / TransactionEvent Ended answered
  'settlement published', // the cloud got the session's `settled` message
  'settlement read', // GET /v1/sessions/{id} said `settled`
] as const;

export type Moment = (typeof MOMENTS)[number];

const TARGET = { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email };
const REFUSED = { ...TARGET, connectorId: '2' };
export const TOP_UP = 1234;
const REGISTER_START = 1_000_000;

/** What the gateway told the world before the cut: each is a promise the image must keep. */
export interface Told {
  topUp?: { reference: string; amount: number };
  /** The refused Start's amount (its session is found by connector: the error names none). */
  refused?: { amount: number };
  start?: { sessionId: string; debited: number };
  transaction?: { ref: string };
  paidEnergyReached?: boolean;
  stop?: boolean;
  settlementPublished?: boolean;
  settlementRead?: boolean;
  /** Every ledger, sessions and replies message the cloud got from the process that was cut. */
  published: { kind: string; seq: number; id: string }[];
}

/** One database's state, read the same way from the image and at the end. */
export interface Facts {
  report: LedgerReport;
  balance: number;
  sessions: {
    id: string;
    connector_id: string;
    state: string;
    amount: number;
    limit_wh: number;
    transaction_ref: string | null;
    cost: number | null;
    delivered_wh: number | null;
    credited: number | null;
  }[];
  entries: { kind: string; amount: number; session_id: string | null; reference: string | null }[];
  keys: { key: string; session_id: string }[];
  outbox: Map<number, string>;
  /** The states each session's outbox rows tell the cloud, in order. */
  published: Map<string, string[]>;
}

export interface PowerCutResult {
  told: Told;
  cut: CutCounts;
  image: Facts;
  final: Facts;
  /** The Start retried with its Idempotency-Key once everything ended. */
  retry: JsonResponse;
  /** The energy the charger's register moved. */
  deliveredWh: number;
  notes: string[];
}

interface World {
  gw: GatewayProcess;
  station: RawStation;
  cloud: Cloud;
  amount: number;
  key: string;
  paidWh?: number;
  tx?: StationTx;
  register: number;
  told: Told;
  /** Kills the gateway from inside the cloud's message handler, the moment a message arrives. */
  killWhen?: (m: Received) => boolean;
  /** How many messages the cloud had when that kill came (its will arrives after them). */
  killedAfter?: number;
}

type Step = (w: World, cutHere: boolean) => Promise<void>;

async function token(w: World): Promise<string> {
  return mintToken(w.gw.url, API_KEY, DRIVERS.ada.email);
}

async function sessionView(w: World): Promise<{ state: string; paidEnergyWh: number }> {
  const id = w.told.start?.sessionId;
  const res = await fetch(`${w.gw.url}/v1/sessions/${id}`, { headers: bearer(await token(w)) });
  if (res.status !== 200) throw new Error(`GET session ${id}: ${res.status}`);
  return (await res.json()) as { state: string; paidEnergyWh: number };
}

async function paidWh(w: World): Promise<number> {
  w.paidWh ??= (await sessionView(w)).paidEnergyWh;
  return w.paidWh;
}

function transaction(w: World): StationTx {
  if (!w.tx) throw new Error('no transaction started');
  return w.tx;
}

function startOnce(
  w: World,
  bearerToken: string,
  target = TARGET,
  key = w.key,
): Promise<JsonResponse> {
  return post(
    w.gw.url,
    '/v1/sessions',
    { ...target, amount: w.amount },
    { ...bearer(bearerToken), 'idempotency-key': key },
  );
}

/** Makes the station refuse remote starts while `during` runs, then accept them again. */
async function refusingStarts<T>(station: RawStation, during: () => Promise<T>): Promise<T> {
  const methods = ['RemoteStartTransaction', 'RequestStartTransaction'];
  for (const m of methods) station.cp.handle(m, async () => ({ status: 'Rejected' }));
  try {
    return await during();
  } finally {
    for (const m of methods) {
      station.cp.handle(m, async ({ params }) => {
        station.remoteStarts.push(remoteStartOf(params));
        return { status: 'Accepted' };
      });
    }
  }
}

const STEPS: Record<Moment, Step> = {
  async 'top-up applied'(w, cutHere) {
    const id = `powercut-top-up-${w.key}`;
    if (cutHere) w.killWhen = (m) => m.kind === 'replies' && m.body.commandId === id;
    await w.cloud.command({ id, type: 'top_up', driverId: DRIVERS.ada.id, amount: TOP_UP });
    const reply = await w.cloud.reply(id, undefined, 30_000);
    if (reply.status !== 'applied') throw new Error(`top-up ${id}: ${JSON.stringify(reply)}`);
    w.told.topUp = { reference: `cmd:${id}`, amount: TOP_UP };
  },
  async 'start refused'(w) {
    const bearerToken = await token(w);
    const res = await refusingStarts(w.station, () =>
      startOnce(w, bearerToken, REFUSED, `${w.key}-refused`),
    );
    if (res.status !== 409 || errorCode(res) !== 'charger_rejected') {
      throw new Error(`refused Start: ${res.status} ${JSON.stringify(res.body)}`);
    }
    w.told.refused = { amount: w.amount };
  },
  async 'start answered'(w) {
    const res = await startOnce(w, await token(w));
    if (res.status !== 200) throw new Error(`Start: ${res.status} ${JSON.stringify(res.body)}`);
    w.told.start = res.body as { sessionId: string; debited: number };
  },
  async 'transaction started'(w) {
    const { tx } = await w.station.start(REGISTER_START);
    w.tx = tx;
    w.register = REGISTER_START;
    w.told.transaction = { ref: tx.ref };
  },
  async 'sample answered'(w) {
    w.register = REGISTER_START + Math.floor((await paidWh(w)) / 2);
    await w.station.send(w.station.sample(transaction(w), w.register));
  },
  async 'paid energy reached'(w) {
    w.register = REGISTER_START + (await paidWh(w));
    await w.station.send(w.station.sample(transaction(w), w.register));
    w.told.paidEnergyReached = true;
  },
  async 'stop answered'(w) {
    await w.station.send(w.station.end(transaction(w), w.register, { reason: 'Remote' }));
    w.told.stop = true;
  },
  async 'settlement published'(w, cutHere) {
    const id = w.told.start?.sessionId;
    const settled = (b: Record<string, unknown>) => b.sessionId === id && b.state === 'settled';
    if (cutHere) w.killWhen = (m) => m.kind === 'sessions' && settled(m.body);
    await waitUntil(() => w.cloud.of('sessions').some(settled), 30_000, `${id} settled upstream`);
    w.told.settlementPublished = true;
  },
  async 'settlement read'(w) {
    await waitUntil(
      async () => (await sessionView(w)).state === 'settled',
      30_000,
      'the API saying settled',
    );
    w.told.settlementRead = true;
  },
};

const PREFIX = 'fleetgw/test-site/';
const UPSTREAM = new Set(['ledger', 'sessions', 'replies']);

/** Reads a database's money state (the image's copy, or the live one at the end). */
export function factsOf(db: Db): Facts {
  const all = <T>(sql: string, ...args: unknown[]) => db.prepare(sql).all(...args) as T[];
  return {
    report: verifyLedger(db),
    balance: (
      db.prepare('SELECT balance FROM wallets WHERE driver_id = ?').get(DRIVERS.ada.id) as {
        balance: number;
      }
    ).balance,
    sessions: all(
      `SELECT id, connector_id, state, amount, limit_wh, transaction_ref, cost, delivered_wh, credited
         FROM sessions ORDER BY created_at`,
    ),
    entries: all(
      'SELECT kind, amount, session_id, reference FROM ledger_entries WHERE driver_id = ? ORDER BY seq',
      DRIVERS.ada.id,
    ),
    keys: all('SELECT key, session_id FROM idempotency_keys'),
    outbox: new Map(
      all<{ seq: number; id: string }>('SELECT seq, id FROM outbox').map((r) => [r.seq, r.id]),
    ),
    published: sessionStates(
      all<{ payload: string }>("SELECT payload FROM outbox WHERE topic = 'sessions' ORDER BY seq"),
    ),
  };
}

function sessionStates(rows: { payload: string }[]): Map<string, string[]> {
  const states = new Map<string, string[]>();
  for (const { payload } of rows) {
    const { sessionId, state } = JSON.parse(payload) as { sessionId: string; state: string };
    states.set(sessionId, [...(states.get(sessionId) ?? []), state]);
  }
  return states;
}

/** The database files as the cut left them, copied off the mount and read there. */
function imageFacts(fs: PowerCutFs): Facts {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-powercut-image-'));
  try {
    for (const suffix of ['', '-wal']) {
      const from = join(fs.backing, 'site', `gateway.db${suffix}`);
      if (existsSync(from)) copyFileSync(from, join(dir, `gateway.db${suffix}`));
    }
    const db = openDatabase(join(dir, 'gateway.db'), { mustExist: true });
    try {
      return factsOf(db);
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function powerCutRun(protocol: RawProtocol, moment: Moment): Promise<PowerCutResult> {
  const notes: string[] = [];
  const fs = await mountPowerCutFs();
  let broker: TestBroker | undefined;
  let cloud: Cloud | undefined;
  let live: Db | undefined;
  let station: RawStation | undefined;
  const gateways: GatewayProcess[] = [];
  const lines: string[] = [];
  try {
    broker = await startBroker();
    const dir = join(fs.mount, 'site');
    mkdirSync(dir);
    const port = await freePort();
    const input = testConfig(dir, {
      http: { host: '127.0.0.1', port },
      uplink: { url: broker.url, reconnectSeconds: 0.2 },
      // The charger reconnects and reports its transaction within these, however loaded the
      // machine: a session the cut left `authorizing` is kept, not refunded for being late.
      sessions: {
        startTimeoutSeconds: 15,
        maxAmount: 1_000_000,
        stopLeadMilliseconds: 0,
        recoveryWaitSeconds: 15,
      },
    });
    const { configPath, dbPath } = gatewayFiles(dir, input);
    // The site as installed: config and seeded database on the disk for good.
    fs.syncAll();

    const key = `${protocol.name}-${moment}`.replace(/[^A-Za-z0-9]+/g, '-');
    cloud = await Cloud.connect(broker.url, PREFIX, `cloud-${key}`);
    const spawn = async () => {
      // Other test files share the machine's two cores: a start-up is waited for, never timed.
      const gw = await spawnGateway(configPath, lines, {}, { startTimeoutMs: 60_000 });
      gateways.push(gw);
      return gw;
    };
    const online = (from: number, value: boolean) =>
      waitUntil(
        () =>
          cloud?.received.slice(from).some((m) => m.kind === 'gateway' && m.body.online === value),
        30_000,
        `the gateway ${value ? 'online' : 'offline'} upstream`,
      );

    const gw = await spawn();
    await online(0, true);
    station = await protocol.connect(gw.ocppUrl, 'CP-1');
    await station.boot();
    const w: World = {
      gw,
      station,
      cloud,
      amount: 1000 + (key.length % 7) * 100,
      key,
      register: REGISTER_START,
      told: { published: [] },
    };
    cloud.client.on('message', (topic, payload, packet) => {
      const m = {
        topic,
        kind: topic.slice(PREFIX.length),
        body: JSON.parse(payload.toString('utf8')) as Record<string, unknown>,
        retain: packet.retain,
      };
      if (w.killWhen?.(m)) {
        w.killWhen = undefined;
        w.killedAfter = w.cloud.received.length;
        w.gw.child.kill('SIGKILL');
      }
    });

    const at = MOMENTS.indexOf(moment);
    for (const step of MOMENTS.slice(0, at + 1)) await STEPS[step](w, step === moment);

    // The cut: the process dies, then every write it had not synced is lost.
    const seenBefore = w.killedAfter ?? cloud.received.length;
    await w.gw.kill();
    const cut = fs.cut();
    notes.push(`cut dropped ${JSON.stringify(cut)}`);
    // The broker publishes the dead process's will after every message it had sent: once the
    // cloud has it, it has everything the cut process published.
    await online(seenBefore, false);
    // What the world was told before the cut (the steps after the restart tell it more).
    const told: Told = {
      ...structuredClone(w.told),
      published: cloud.received
        .filter((m) => UPSTREAM.has(m.kind))
        .map((m) => ({ kind: m.kind, seq: Number(m.body.seq), id: String(m.body.id) })),
    };
    const image = imageFacts(fs);

    // The power is back: the gateway starts on the same folder, the charger reconnects, and the
    // session goes on from where the charger and the app were.
    w.gw = await spawn();
    await w.station.reconnect();
    for (const step of MOMENTS.slice(at + 1)) await STEPS[step](w, false);

    live = openDatabase(dbPath, { mustExist: true });
    const open = live.prepare(
      "SELECT count(*) AS n FROM sessions WHERE state NOT IN ('settled', 'refunded')",
    );
    await waitUntil(() => (open.get() as { n: number }).n === 0, 60_000, 'every session ended');
    const retry = await startOnce(w, await token(w));
    return {
      told,
      cut,
      image,
      final: factsOf(live),
      retry,
      deliveredWh: w.register - REGISTER_START,
      notes,
    };
  } catch (err) {
    // What the gateways said, for a failure in CI: their warnings and errors, and the cut.
    const said = process.env.POWERCUT_VERBOSE
      ? lines
      : lines.filter((l) => /"level":(40|50|60)|kill point|recover/.test(l)).slice(-30);
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`${message}\n${notes.join('\n')}\n${said.join('\n')}\n${fs.log.join('\n')}`, {
      cause: err,
    });
  } finally {
    await station?.close().catch(() => undefined);
    await Promise.all(gateways.map((g) => g.kill()));
    live?.close();
    await cloud?.close();
    await broker?.close();
    await fs.close();
  }
}
