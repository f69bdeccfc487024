import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from './mqtt-broker.js';
import { waitUntil } from './wait.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
/** The firmware's sources are vendored in test/peers/microocpp (a test tool): built out of tree. */
const BUILD_SCRIPT = resolve(ROOT, 'test', 'peers', 'microocpp', 'build.sh');
const CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'microocpp');

export type MicroOcppVersion = '1.6' | '2.0.1';

/**
 * Builds the MicroOcpp simulator (a cached build only relinks) and returns the binary's path.
 * Rejects when the build fails: CI must not mistake a missing peer for a pass.
 */
export function buildMicroOcpp(): Promise<string> {
  return new Promise((resolvePath, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT, CACHE_DIR], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (err += b.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolvePath(out.trim().split('\n').at(-1) ?? '');
      else reject(new Error(`MicroOcpp build (${BUILD_SCRIPT}) failed with ${code}:\n${err}`));
    });
  });
}

/** One OCPP-J message the firmware sent or received, as its standard output shows it. */
export interface MoFrame {
  sent: boolean;
  message: unknown[];
}

export interface EvseState {
  evPlugged: boolean;
  evsePlugged: boolean;
  evReady: boolean;
  evseReady: boolean;
}

export interface MicroOcpp {
  version: MicroOcppVersion;
  frames: MoFrame[];
  lines: string[];
  /** The firmware's own meter on connector 1: register (Wh) and power (W). */
  meter(): Promise<{ energy: number; power: number }>;
  evse(state: Partial<EvseState>): Promise<void>;
  /**
   * A card presented at connector 1's reader, through the firmware's own path (1.6 its idTag, a
   * start or, the transaction's own, a stop; 2.0.1 an idToken of `type`, authorized or ended).
   */
  presentCard(idTag: string, type?: string): Promise<void>;
  /** When it last opened its OCPP connection (ms): it tries again 10 s after an attempt. */
  connectedAt(): number;
  /** Calls the firmware sent with this action, in order. */
  sentCalls(action: string): Record<string, unknown>[];
  stop(): Promise<void>;
}

export interface MicroOcppOptions {
  version: MicroOcppVersion;
  identity: string;
  ocppUrl: string;
  password: string;
}

const configFile = (configurations: object[]) =>
  JSON.stringify({ head: { 'content-type': 'ocpp_config_file', version: '2.0' }, configurations });

/** Starts the firmware in its own directory (its mo_store), on a free port for its REST API. */
export async function startMicroOcpp(binary: string, o: MicroOcppOptions): Promise<MicroOcpp> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-mo-'));
  const store = join(dir, 'mo_store');
  mkdirSync(store);
  const api = `http://127.0.0.1:${await freePort()}`;
  writeFileSync(
    join(store, 'simulator.jsn'),
    configFile([{ type: 'string', key: 'OcppVersion', value: o.version }]),
  );
  writeFileSync(join(store, 'api.jsn'), JSON.stringify({ url: api, user: '', pass: '' }));
  if (o.version === '1.6') {
    writeFileSync(
      join(store, 'ws-conn.jsn'),
      configFile([
        { type: 'string', key: 'Cst_BackendUrl', value: o.ocppUrl },
        { type: 'string', key: 'Cst_ChargeBoxId', value: o.identity },
        {
          type: 'string',
          key: 'AuthorizationKey',
          value: Buffer.from(o.password, 'utf8').toString('hex').toUpperCase(),
        },
      ]),
    );
  } else {
    const variable = (name: string, valActual: string) => ({
      component: 'SecurityCtrlr',
      name,
      valActual,
    });
    writeFileSync(
      join(store, 'ws-conn-v201.jsn'),
      JSON.stringify({
        variables: [
          variable('CsmsUrl', o.ocppUrl),
          variable('Identity', o.identity),
          variable('BasicAuthPassword', o.password),
        ],
      }),
    );
  }
  // Its stdio is fully buffered on a pipe: stdbuf makes each frame arrive as it is logged.
  const child: ChildProcess = spawn('stdbuf', ['-oL', '-eL', binary], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  // A worker that dies (a hook timeout) must not leave firmware charging on the machine.
  const orphaned = () => child.kill('SIGKILL');
  process.once('exit', orphaned);
  const lines: string[] = [];
  const frames: MoFrame[] = [];
  let connectedAtMs = 0;
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => {
      lines.push(line);
      if (line.endsWith('-- connected!')) connectedAtMs = Date.now();
      const m = /^\[MO\] (Send|Recv): (\[.*\])\s*$/.exec(line);
      if (!m) return;
      try {
        frames.push({ sent: m[1] === 'Send', message: JSON.parse(m[2] ?? '') as unknown[] });
      } catch {
        // A line the firmware cut short: the frames around it still count.
      }
    });
  }
  const mo: MicroOcpp = {
    version: o.version,
    frames,
    lines,
    async meter() {
      const res = await fetch(`${api}/api/connector/1/meter`);
      return (await res.json()) as { energy: number; power: number };
    },
    async evse(state) {
      const res = await fetch(`${api}/api/connector/1/evse`, {
        method: 'POST',
        body: JSON.stringify(state),
      });
      if (!res.ok) throw new Error(`MicroOcpp evse: ${res.status}`);
      await res.text();
    },
    async presentCard(idTag, type = 'ISO14443') {
      const query = new URLSearchParams({ id: idTag, type, evse_id: '1' });
      const res =
        o.version === '1.6'
          ? await fetch(`${api}/api/connector/1/transaction`, {
              method: 'POST',
              body: JSON.stringify({ idTag }),
            })
          : await fetch(`${api}/api/authorize?${query.toString()}`, { method: 'POST' });
      if (!res.ok) throw new Error(`MicroOcpp card: ${res.status} ${await res.text()}`);
      await res.text();
    },
    connectedAt: () => connectedAtMs,
    sentCalls(action) {
      return frames
        .filter((f) => f.sent && f.message[0] === 2 && f.message[2] === action)
        .map((f) => f.message[3] as Record<string, unknown>);
    },
    async stop() {
      process.off('exit', orphaned);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
  child.once('exit', (code, signal) => {
    if (signal !== 'SIGKILL') lines.push(`[test] MicroOcpp exited: ${code ?? signal}`);
  });
  await waitUntil(
    () =>
      mo.meter().then(
        () => true,
        () => false,
      ),
    10_000,
    `the MicroOcpp REST API at ${api}`,
  );
  return mo;
}

/**
 * Whether the firmware accepted the gateway's sample interval (1.6 MeterValueSampleInterval, 2.0.1
 * SampledDataCtrlr.TxUpdatedInterval): before that it samples once a minute, or never.
 */
export function intervalAccepted(mo: MicroOcpp, seconds: number): boolean {
  const answers = new Map(
    mo.frames.filter((f) => f.sent && f.message[0] === 3).map((f) => [f.message[1], f.message[2]]),
  );
  return mo.frames.some((f) => {
    if (f.sent || f.message[0] !== 2) return false;
    const [, id, action, payload] = f.message as [number, string, string, Record<string, unknown>];
    const answer = answers.get(id) as Record<string, unknown> | undefined;
    if (!answer) return false;
    if (mo.version === '1.6') {
      return (
        action === 'ChangeConfiguration' &&
        payload.key === 'MeterValueSampleInterval' &&
        payload.value === String(seconds) &&
        answer.status === 'Accepted'
      );
    }
    if (action !== 'SetVariables') return false;
    const asked = (payload.setVariableData as SetVariable[]).some(
      (v) => v.variable.name === 'TxUpdatedInterval' && v.attributeValue === String(seconds),
    );
    const taken = (answer.setVariableResult as SetVariable[]).some(
      (v) => v.variable.name === 'TxUpdatedInterval' && v.attributeStatus === 'Accepted',
    );
    return asked && taken;
  });
}

interface SetVariable {
  variable: { name: string };
  attributeValue?: string;
  attributeStatus?: string;
}

interface SampledValue {
  value: number | string;
  context?: string;
  measurand?: string;
}

/**
 * The registers (Wh) the firmware itself sent for the transaction's start and end: 1.6 meterStart
 * and meterStop, 2.0.1 the Transaction.Begin and Transaction.End samples. The first of each: a
 * resend after a reconnect repeats it.
 */
export function transactionRegisters(
  mo: MicroOcpp,
  transactionRef: string,
  idToken: string,
): { start?: number; stop?: number } {
  if (mo.version === '1.6') {
    const start = mo.sentCalls('StartTransaction').find((p) => p.idTag === idToken);
    const stop = mo
      .sentCalls('StopTransaction')
      .find((p) => String(p.transactionId) === transactionRef);
    return { start: start?.meterStart as number, stop: stop?.meterStop as number };
  }
  const events = mo
    .sentCalls('TransactionEvent')
    .filter(
      (p) => (p.transactionInfo as { transactionId: string }).transactionId === transactionRef,
    );
  const register = (eventType: string, context: string) => {
    for (const e of events.filter((p) => p.eventType === eventType)) {
      for (const mv of (e.meterValue ?? []) as { sampledValue: SampledValue[] }[]) {
        const sv = mv.sampledValue.find(
          (s) =>
            s.context === context &&
            (s.measurand ?? 'Energy.Active.Import.Register') === 'Energy.Active.Import.Register',
        );
        if (sv) return Number(sv.value);
      }
    }
    return undefined;
  };
  return {
    start: register('Started', 'Transaction.Begin'),
    stop: register('Ended', 'Transaction.End'),
  };
}
