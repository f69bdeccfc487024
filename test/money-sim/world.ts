import { rmSync, writeFileSync } from 'node:fs';
import { vi } from 'vitest';
import { Outbox } from '../../src/store/outbox.js';
import { Wallet } from '../../src/wallet/wallet.js';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { bearer, post, type JsonResponse } from '../helpers/http.js';
import { ChargerRules } from './charger-rules.js';
import {
  CHARGER_KEYS,
  DRIVER_KEYS,
  Model,
  type ChargerKey,
  type ConnectorKey,
  type DriverKey,
} from './model.js';
import { SimCharger } from './sim-charger.js';
import { gatewayHealth } from '../helpers/operator.js';

/** Seconds the gateway waits for the EV after a remote start (the time jumps are sized on it). */
export const START_TIMEOUT_SECONDS = 5;

/** The gateway's OCPP call timeout (ocpp-rpc; long enough never to fire during a step). */
export const CALL_TIMEOUT_SECONDS = 120;

/** The grace a connector reported Available gives its transaction's stop (the gateway's default). */
export const STOP_GRACE_SECONDS = 60;

/** After a restart, how long a half-way session waits for its charger (not a multiple of the others). */
export const RECOVERY_WAIT_SECONDS = 37;

/**
 * Firmware personalities (the simulators' names) a run's chargers get: the deviations that matter
 * to money. Not `no-txid-meter`: a sample without a transactionId on a connector where the charger
 * also runs a transaction the gateway refused is ambiguous, and the gateway counts it for nobody
 * (docs/field-compatibility.md), while this model still bills it; until the model knows that rule
 * the personality is covered end to end by test/personalities-e2e.test.ts. Each entry is one charger's set; 'well-behaved' is the empty set.
 */
export const MONEY_PERSONALITIES: Record<ChargerKey, readonly (readonly string[])[]> = {
  'CP-1': [
    [],
    ['numeric-values'],
    ['kwh-register', 'lowercase-units'],
    ['vendor-fields'],
    ['clock-skew'],
    ['queued-burst'],
    ['numeric-values', 'clock-skew=-3', 'vendor-fields'],
  ],
  'CP-AC': [
    [],
    ['kwh-register', 'lowercase-units'],
    ['vendor-fields'],
    ['clock-skew'],
    ['queued-burst'],
    ['clock-skew=-3', 'vendor-fields', 'queued-burst'],
  ],
};

export type ChargerPersonalities = Record<ChargerKey, readonly string[]>;

const WELL_BEHAVED: ChargerPersonalities = { 'CP-1': [], 'CP-AC': [] };

function show(personality: readonly string[]): string {
  return personality.length === 0 ? 'well-behaved' : personality.join(',');
}

/** Real-time bound for anything the simulation waits on: a hang is a failure, not a stall. */
const WAIT_MS = 15_000;

/**
 * The system under test and the simulation's model side by side: the real gateway in-process
 * (real SQLite file, real HTTP and OCPP sockets on 127.0.0.1) on vitest's fake clock, so that time
 * moves only when a step moves it, and the two simulated chargers.
 */
export class World {
  readonly model = new Model(
    START_TIMEOUT_SECONDS * 1000,
    STOP_GRACE_SECONDS * 1000,
    RECOVERY_WAIT_SECONDS * 1000,
  );
  readonly rules = new ChargerRules(this.model);
  readonly chargers: Record<ChargerKey, SimCharger>;
  /** Everything the simulation did, for the failure report. */
  readonly trace: string[] = [];
  /** Each session's store state after the last step (states only move forward). */
  readonly seen = new Map<string, string>();
  /** Steps run, by kind. */
  readonly stats = new Map<string, number>();

  private constructor(
    readonly t: TestGateway,
    readonly personalities: ChargerPersonalities,
  ) {
    const delivered = (
      c: SimCharger,
      msg: Parameters<ChargerRules['delivered']>[1],
      reply: unknown,
    ) => this.rules.delivered(c.key, msg, reply);
    this.chargers = {
      'CP-1': new SimCharger('CP-1', 'ocpp1.6', ['1', '2'], delivered, personalities['CP-1']),
      'CP-AC': new SimCharger('CP-AC', 'ocpp2.0.1', ['1'], delivered, personalities['CP-AC']),
    };
    this.trace.push(
      `personalities: CP-1 ${show(personalities['CP-1'])}, CP-AC ${show(personalities['CP-AC'])}`,
    );
  }

  static async create(personalities: ChargerPersonalities = WELL_BEHAVED): Promise<World> {
    const t = await startTestGateway({
      // ocpp-rpc times its calls on the real clock, which no step controls: long enough never to
      // fire during a run. A charger that never answers is modelled as one whose link drops.
      // The message-rate limit is on the gateway clock, which only time jumps move: out of the way.
      ocpp: {
        meterSampleIntervalSeconds: 10,
        callTimeoutSeconds: CALL_TIMEOUT_SECONDS,
        messageRate: { perSecond: 10_000, burst: 100_000 },
        authFailureDelay: { initialMilliseconds: 5, maxMilliseconds: 40 },
      },
      // Rate limits are not what this tests, and a run's drivers send many requests per minute.
      http: {
        host: '127.0.0.1',
        port: 0,
        rateLimits: { mintPerMinute: 1_000_000, driverPerMinute: 1_000_000 },
      },
      sessions: {
        startTimeoutSeconds: START_TIMEOUT_SECONDS,
        maxAmount: 1_000_000,
        stopLeadMilliseconds: 0,
        stopGraceSeconds: STOP_GRACE_SECONDS,
        recoveryWaitSeconds: RECOVERY_WAIT_SECONDS,
        // A week: longer than any run's time jumps (150 × 16 min), so silence never settles here.
        settleAfterSilenceSeconds: 7 * 86_400,
      },
      log: { level: 'warn' },
    });
    // Timers and Date only: sockets, fetch and SQLite run on real I/O.
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
    });
    const w = new World(t, personalities);
    for (const key of CHARGER_KEYS) await w.connect(key);
    for (const driver of DRIVER_KEYS) {
      const res = await w.mint(driver);
      const body = res.body as { token: string; expiresAt: string };
      w.model.tokens[driver] = { token: body.token, expiresAtMs: Date.parse(body.expiresAt) };
    }
    return w;
  }

  get db() {
    return this.t.gw.db;
  }

  now(): number {
    return Date.now();
  }

  async close(): Promise<void> {
    for (const c of Object.values(this.chargers)) await c.disconnect();
    vi.useRealTimers();
    await this.t.close();
  }

  async connect(key: ChargerKey, boot = true): Promise<void> {
    await this.chargers[key].connect(this.t.gw.ocppUrl, boot);
    this.model.online[key] = true;
    this.model.chargerConnected(key, this.now());
    await this.chargersOnline();
  }

  /** Waits until the gateway counts as online exactly the chargers the model says are. */
  async chargersOnline(): Promise<void> {
    const want = CHARGER_KEYS.filter((k) => this.model.online[k]).length;
    await until(async () => {
      const body = await gatewayHealth<{ chargersOnline: number }>(
        this.t.gw.operatorUrl,
        this.t.gw.db,
      );
      return body.chargersOnline === want;
    }, `gateway to count ${want} chargers online`);
  }

  async mint(driver: DriverKey): Promise<JsonResponse> {
    return post(
      this.t.gw.url,
      '/v1/driver-tokens',
      { driverEmail: DRIVERS[driver].email },
      { authorization: `ApiKey ${API_KEY}` },
    );
  }

  quote(driver: DriverKey, c: ConnectorKey, token: string): Promise<JsonResponse> {
    return post(this.t.gw.url, '/v1/sessions/quote', target(driver, c), bearer(token));
  }

  /**
   * Issue 4 part 1 adds an Idempotency-Key header to Start: `headers` is where a retry command
   * (same key and body after a lost response or a restart) passes it.
   */
  start(
    driver: DriverKey,
    c: ConnectorKey,
    token: string,
    amount: number,
    headers: Record<string, string> = {},
  ): Promise<JsonResponse> {
    return post(
      this.t.gw.url,
      '/v1/sessions',
      { ...target(driver, c), amount },
      { ...bearer(token), ...headers },
    );
  }

  /**
   * A crash between two steps: the gateway restarts on what its database held at this instant,
   * and nothing the dying process did afterwards (answering its pending Starts, refunding them)
   * survives. The snapshot is taken from the live connection, so it holds every commit so far.
   */
  async crashAndRestart(): Promise<void> {
    const snapshot = this.db.serialize();
    const path = this.t.configInput.database?.path;
    if (!path) throw new Error('the test gateway has no database path');
    await this.t.gw.close();
    for (const suffix of ['-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    writeFileSync(path, snapshot);
    await this.t.restart();
  }

  topUp(driver: DriverKey, amount: number, reference: string): boolean {
    const wallet = new Wallet(this.db, new Outbox(this.db));
    const at = new Date(this.now()).toISOString();
    return wallet.credit(DRIVERS[driver].id, 'top_up', amount, reference, at) !== null;
  }
}

function target(driver: DriverKey, c: ConnectorKey) {
  return { chargerId: c.charger, connectorId: c.connectorId, driverEmail: DRIVERS[driver].email };
}

/** Taken before the fake clock is installed: the polls below wait in real time. */
const realSetTimeout = globalThis.setTimeout;

/**
 * Polls until `probe` holds: first on the next few event-loop turns (most waits end there), then
 * every millisecond of real time, so a longer wait does not spin a core the gateway needs.
 */
export async function until(probe: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = performance.now() + WAIT_MS;
  for (let turn = 0; !(await probe()); turn++) {
    if (performance.now() > deadline) throw new Error(`simulation stalled waiting for ${what}`);
    await new Promise((r) => (turn < 20 ? setImmediate(r) : realSetTimeout(r, 1)));
  }
}

/** Awaits `p`, failing the step if it takes longer than the wait bound in real time. */
export async function within<T>(p: Promise<T>, what: string): Promise<T> {
  let settled = false;
  const guarded = p.finally(() => (settled = true));
  await until(() => settled, what);
  return guarded;
}

/** Lets the gateway finish what a step set off (background stops, timers just fired). */
export async function quiesce(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}
