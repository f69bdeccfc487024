import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { FRAMES, type Call, type FrameSet, type Payload, type TxStart } from './frames.js';
import type {
  BenchCharger,
  Faults,
  GeneratorCommand,
  GeneratorReply,
  LoadResult,
} from './protocol.js';

/**
 * The OCPP load generator (a forked child, driven over IPC): holds its share of the bench chargers
 * as raw `ws` clients, so that it costs far less per message than the server it loads. Every
 * server CALL is answered at once; every reply is checked, and refusals are counted as faults.
 */

const START_REGISTER_WH = 1_000_000;
/**
 * The register rises as on a 150 kW DC charger, whatever the message rate: a register rising by
 * the message would be a megawatt charger to the gateway's paid-energy watch, which then stops it.
 */
const MS_PER_WH = 3_600_000 / 150_000;

type OnReply = (payload: Payload | undefined, latencyMs: number) => void;

interface Pending {
  action: string;
  sentAt: number;
  onReply: OnReply;
}

interface Charger extends BenchCharger {
  frames: FrameSet;
  ws: WebSocket;
  nextId: number;
  pending: Map<string, Pending>;
  tx?: { ref: string; connector: number };
  registerWh: number;
  /** performance.now() when the transaction started. */
  startedAt: number;
  seqNo: number;
  sent: number;
  /** Its configuration, the same object across its connections. */
  settings: Map<string, string>;
  /** Dropped on purpose (`drop`): its close is no fault. */
  dropped: boolean;
  /** performance.now() of the server's first settings read on this connection. */
  settingsReadAt?: number;
}

const faults: Faults = { callErrors: 0, refused: 0, unknownCalls: 0, closed: 0, examples: [] };
const chargers: Charger[] = [];
/** Each station's configuration by id: what it keeps when its connection drops. */
const stored = new Map<string, Map<string, string>>();
const serverCalls: Record<string, number> = {};
let started = 0;
let onStarted: (() => void) | undefined;
let closing = false;
/** performance.now() when the last `connect` command began. */
let connectBegan = 0;
let onSettingsRead: (() => void) | undefined;
/** performance.now() of the last CALL the server sent. */
let lastServerCallAt = 0;
/** What "the server's calls went quiet" means once every station's settings were read. */
const QUIET_MS = 300;

function fault(kind: keyof Omit<Faults, 'examples'>, example: string): void {
  faults[kind] += 1;
  if (faults.examples.length < 5) faults.examples.push(example);
}

function send(c: Charger, call: Call, onReply: OnReply): void {
  const id = String(c.nextId++);
  c.pending.set(id, { action: call.action, sentAt: performance.now(), onReply });
  c.ws.send(JSON.stringify([2, id, call.action, call.params]));
}

function call(c: Charger, message: Call): Promise<Payload | undefined> {
  return new Promise((resolve) => send(c, message, (payload) => resolve(payload)));
}

/** What a working server answers; anything else is a fault, not a measurement. */
function refusal(action: string, payload: Payload): string | undefined {
  const status =
    action === 'BootNotification'
      ? payload.status
      : ((payload.idTagInfo ?? payload.idTokenInfo) as { status?: unknown } | undefined)?.status;
  const expectsStatus =
    action === 'BootNotification' ||
    action === 'StartTransaction' ||
    payload.idTokenInfo !== undefined;
  return expectsStatus && status !== 'Accepted'
    ? `${action}: ${JSON.stringify(payload)}`
    : undefined;
}

function onMessage(c: Charger, data: WebSocket.RawData): void {
  const msg = JSON.parse(data.toString()) as unknown[];
  const [type, id] = msg as [number, string];
  if (type === 2) {
    answer(c, id, msg[2] as string, msg[3] as Payload);
    return;
  }
  const pending = c.pending.get(id);
  if (!pending) return;
  c.pending.delete(id);
  const latency = performance.now() - pending.sentAt;
  if (type === 3) {
    const payload = msg[2] as Payload;
    const refused = refusal(pending.action, payload);
    if (refused) fault('refused', `${c.id} ${refused}`);
    pending.onReply(payload, latency);
  } else {
    fault('callErrors', `${c.id} ${pending.action}: ${JSON.stringify(msg.slice(2))}`);
    pending.onReply(undefined, latency);
  }
}

function answer(c: Charger, id: string, action: string, params: Payload): void {
  serverCalls[action] = (serverCalls[action] ?? 0) + 1;
  lastServerCallAt = performance.now();
  if ((action === 'GetConfiguration' || action === 'GetVariables') && !c.settingsReadAt) {
    c.settingsReadAt = performance.now();
    onSettingsRead?.();
  }
  const reply = c.frames.answer(action, params, c.settings);
  if (!reply) {
    fault('unknownCalls', `${c.id} ${action}`);
    c.ws.send(JSON.stringify([4, id, 'NotImplemented', '', {}]));
    return;
  }
  c.ws.send(JSON.stringify([3, id, reply]));
  // A remote start is taken at once: the EV is plugged in and the transaction starts.
  if (action === 'RemoteStartTransaction') {
    const p = params as { connectorId: number; idTag: string };
    startTx(c, { connector: p.connectorId, idToken: p.idTag, transactionId: '' });
  } else if (action === 'RequestStartTransaction') {
    const p = params as { evseId: number; remoteStartId: number; idToken: { idToken: string } };
    startTx(c, {
      connector: p.evseId,
      idToken: p.idToken.idToken,
      remoteStartId: p.remoteStartId,
      transactionId: `bench-${c.id}`,
    });
  }
}

function startTx(c: Charger, tx: TxStart): void {
  send(c, c.frames.start(tx, c.registerWh, new Date().toISOString()), (payload) => {
    const ref =
      c.protocol === 'ocpp1.6'
        ? String((payload as { transactionId?: number } | undefined)?.transactionId)
        : tx.transactionId;
    c.tx = { ref, connector: tx.connector };
    c.startedAt = performance.now();
    started += 1;
    if (started === chargers.length) onStarted?.();
  });
}

/** The next message of a charger in a session: three meter samples, then a heartbeat. */
function nextMessage(c: Charger): Call {
  c.sent += 1;
  if (c.sent % 4 === 0 || !c.tx) return c.frames.heartbeat();
  c.registerWh = START_REGISTER_WH + Math.floor((performance.now() - c.startedAt) / MS_PER_WH);
  c.seqNo += 1;
  return c.frames.sample(c.tx.ref, c.tx.connector, c.registerWh, new Date().toISOString(), c.seqNo);
}

async function connectOne(url: string, charger: BenchCharger, password: string): Promise<number> {
  const t0 = performance.now();
  const auth = Buffer.from(`${charger.id}:${password}`).toString('base64');
  const ws = new WebSocket(`${url}/${encodeURIComponent(charger.id)}`, [charger.protocol], {
    headers: { authorization: `Basic ${auth}` },
    perMessageDeflate: false,
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) =>
      reject(new Error(`${charger.id}: HTTP ${res.statusCode} on upgrade`)),
    );
  });
  const c: Charger = {
    ...charger,
    frames: FRAMES[charger.protocol],
    ws,
    nextId: 1,
    pending: new Map(),
    registerWh: START_REGISTER_WH,
    startedAt: 0,
    seqNo: 0,
    sent: 0,
    settings: stored.get(charger.id) ?? new Map(),
    dropped: false,
  };
  stored.set(c.id, c.settings);
  ws.on('message', (data) => onMessage(c, data));
  ws.on('close', (code) => {
    if (!closing && !c.dropped) fault('closed', `${c.id} closed with ${code}`);
  });
  chargers.push(c);
  await call(c, c.frames.boot());
  await call(c, c.frames.available(1));
  return performance.now() - t0;
}

async function connectAll(
  url: string,
  list: BenchCharger[],
  password: string,
  inFlight: number,
): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < list.length) {
      const charger = list[next++] as BenchCharger;
      times.push(await connectOne(url, charger, password));
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, list.length) }, worker));
  return times;
}

/**
 * Until every charger's settings were read and the server has sent no call for QUIET_MS (what a
 * read leads to, changes and a read-back, is done): the time from the connect to the last read.
 */
async function awaitSettingsRead(timeoutMs: number): Promise<number> {
  const unread = () => chargers.filter((c) => c.settingsReadAt === undefined).length;
  if (unread() > 0) {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        onSettingsRead = undefined;
        reject(new Error(`settings of ${unread()} of ${chargers.length} stations never read`));
      }, timeoutMs);
      onSettingsRead = () => {
        if (unread() > 0) return;
        clearTimeout(timer);
        onSettingsRead = undefined;
        resolve();
      };
    });
  }
  while (performance.now() - lastServerCallAt < QUIET_MS) {
    await new Promise((r) => setTimeout(r, QUIET_MS - (performance.now() - lastServerCallAt)));
  }
  return Math.max(...chargers.map((c) => c.settingsReadAt ?? 0)) - connectBegan;
}

function awaitStarted(timeoutMs: number): Promise<void> {
  if (started >= chargers.length) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`only ${started} of ${chargers.length} transactions started`)),
      timeoutMs,
    );
    onStarted = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

/** Runs a load for `ms`, then waits (bounded) for the replies still under way. */
async function load(ms: number, intervalMs?: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let replies = 0;
  let outstanding = 0;
  let running = true;
  const t0 = performance.now();
  const end = t0 + ms;
  const cpu0 = process.cpuUsage();
  const fire = (c: Charger, again: boolean) => {
    if (!running) return;
    outstanding += 1;
    const sentAt = performance.now();
    send(c, nextMessage(c), (_payload, latency) => {
      outstanding -= 1;
      if (sentAt <= end) latencies.push(latency);
      if (performance.now() <= end) replies += 1;
      if (again) fire(c, true);
    });
  };
  const timers: NodeJS.Timeout[] = [];
  if (intervalMs === undefined) {
    for (const c of chargers) fire(c, true);
  } else {
    chargers.forEach((c, i) => {
      const offset = (i / chargers.length) * intervalMs;
      timers.push(
        setTimeout(() => {
          fire(c, false);
          timers.push(setInterval(() => fire(c, false), intervalMs));
        }, offset),
      );
    });
  }
  await new Promise((r) => setTimeout(r, ms));
  running = false;
  const cpu = process.cpuUsage(cpu0);
  const windowMs = performance.now() - t0;
  for (const t of timers) clearTimeout(t);
  const drainUntil = performance.now() + 15_000;
  while (outstanding > 0 && performance.now() < drainUntil) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    replies,
    windowMs,
    latenciesMs: latencies,
    cpuFraction: (cpu.user + cpu.system) / 1000 / windowMs,
  };
}

async function run(command: GeneratorCommand): Promise<GeneratorReply> {
  const { seq } = command;
  switch (command.cmd) {
    case 'connect': {
      connectBegan = performance.now();
      const times = await connectAll(
        command.url,
        command.chargers,
        command.password,
        command.inFlight,
      );
      return { seq, ok: true, cmd: 'connect', perConnectionMs: times, faults };
    }
    case 'startOwn': {
      const done = awaitStarted(60_000);
      for (const c of chargers) {
        startTx(c, { connector: 1, idToken: 'BENCH', transactionId: `bench-${c.id}` });
      }
      await done;
      return { seq, ok: true, cmd: 'started', started, serverCalls, faults };
    }
    case 'awaitStarted':
      await awaitStarted(command.timeoutMs);
      return { seq, ok: true, cmd: 'started', started, serverCalls, faults };
    case 'saturate':
      return { seq, ok: true, cmd: 'load', result: await load(command.ms), faults };
    case 'paced':
      return {
        seq,
        ok: true,
        cmd: 'load',
        result: await load(command.ms, command.intervalMs),
        faults,
      };
    case 'drop':
      for (const c of chargers.splice(0)) {
        c.dropped = true;
        c.ws.terminate();
      }
      return { seq, ok: true, cmd: 'dropped', faults };
    case 'settingsRead':
      return {
        seq,
        ok: true,
        cmd: 'settingsRead',
        lastReadMs: await awaitSettingsRead(command.timeoutMs),
        faults,
      };
    case 'close':
      closing = true;
      for (const c of chargers) c.ws.terminate();
      return {
        seq,
        ok: true,
        cmd: 'closed',
        reportedWh: chargers.reduce((sum, c) => sum + c.registerWh - START_REGISTER_WH, 0),
        faults,
      };
  }
}

process.on('message', (command: GeneratorCommand) => {
  run(command).then(
    (reply) => process.send?.(reply),
    (err: unknown) => process.send?.({ seq: command.seq, ok: false, error: String(err), faults }),
  );
});
// The bench is gone (finished or crashed): so are its chargers.
process.on('disconnect', () => process.exit(0));
