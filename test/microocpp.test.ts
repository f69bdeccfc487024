import type Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { applySeed } from '../src/cli/offline/seed.js';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { parseConfig } from '../src/config/read-config.js';
import { openDatabase } from '../src/store/database.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  PASSWORD_HASH,
  testConfig,
  testSeed,
} from './helpers/gateway.js';
import { spawnGateway, type GatewayProcess } from './helpers/gateway-process.js';
import { mintToken, startSession } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import {
  buildMicroOcpp,
  intervalAccepted,
  startMicroOcpp,
  transactionRegisters,
  type MicroOcpp,
} from './helpers/microocpp.js';
import { freePort } from './helpers/mqtt-broker.js';
import { waitUntil } from './helpers/wait.js';

/**
 * Real charger firmware (MicroOcpp 1.2.0 in its Linux simulator, test/peers/microocpp) against
 * the gateway as a child process: paid sessions in real time (the EV draws about 11 kW), every
 * amount checked against the firmware's own meter.
 */

const SAMPLE_SECONDS = 2;
/** 1 NGN per Wh: an amount is its paid energy. */
const PRICE_PER_KWH = 1000;
/** A case runs in real time: up to 25 s of charging, plus a reconnect. */
const CASE_MS = 60_000;

interface SessionRow {
  state: string;
  amount: number;
  limit_wh: number;
  delivered_wh: number;
  cost: number;
  credited: number;
  id_token: string;
  transaction_ref: string;
  end_reason: string | null;
}

/** What the firmware measured for one session, beside what the gateway made of it. */
interface Run {
  id: string;
  session: SessionRow;
  /** The transaction's energy by the registers the firmware sent (stop − start). */
  firmwareWh: number;
  /** The firmware's register (REST API) after the session less before it. */
  registerWh: number;
  /** The energy of one sample interval at the most power the firmware reported. */
  oneSampleWh: number;
}

let binary = '';

beforeAll(async () => {
  binary = await buildMicroOcpp();
}, 600_000);

describe.each(['1.6', '2.0.1'] as const)('MicroOcpp firmware on OCPP %s', (version) => {
  const identity = version === '1.6' ? 'MO-16' : 'MO-201';
  const lines: string[] = [];
  const costs: number[] = [];
  let dir = '';
  let configPath = '';
  let gateway: GatewayProcess | undefined;
  let mo: MicroOcpp | undefined;
  let db: Database.Database | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-mo-gw-'));
    const input = testConfig(dir, {
      http: { host: '127.0.0.1', port: await freePort() },
      ocpp: { meterSampleIntervalSeconds: SAMPLE_SECONDS },
      sessions: { maxAmount: 1_000_000 },
      tariffs: { mo: { pricePerKwh: PRICE_PER_KWH } },
      chargers: [
        {
          id: identity,
          passwordHash: PASSWORD_HASH,
          connectors: [{ id: '1', tariff: 'mo', type: 'AC', maxPowerKw: 22 }],
        },
      ],
    });
    configPath = join(dir, 'gateway.yaml');
    writeFileSync(configPath, stringify(input));
    db = openDatabase(parseConfig(input, dir).database.path);
    applySeed(db, testSeed, new Date().toISOString());
    gateway = await spawnGateway(configPath, lines);
    mo = await startMicroOcpp(binary, {
      version,
      identity,
      ocppUrl: gateway.ocppUrl,
      password: CHARGER_PASSWORD,
    });
    const firmware = mo;
    await waitUntil(() => intervalAccepted(firmware, SAMPLE_SECONDS), 30_000, 'sample interval');
  }, 60_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state !== 'fail') return;
    console.log(`MicroOcpp ${version}:\n${mo?.lines.slice(-80).join('\n')}`);
    console.log(`gateway:\n${lines.slice(-40).join('\n')}`);
  });

  afterAll(async () => {
    await mo?.stop();
    await gateway?.kill();
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const firmware = () => mo ?? expect.fail('MicroOcpp did not start');
  const gw = () => gateway ?? expect.fail('the gateway did not start');
  const store = () => db ?? expect.fail('no database');
  const session = (id: string) =>
    store().prepare('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow;

  /** The firmware's last connector-1 status, once the gateway has answered it. */
  function answeredStatus(): string | undefined {
    const frames = firmware().frames;
    const sent = frames.filter(
      (f) =>
        f.sent &&
        f.message[0] === 2 &&
        f.message[2] === 'StatusNotification' &&
        ((f.message[3] as { connectorId: number; evseId?: number }).evseId ??
          (f.message[3] as { connectorId: number }).connectorId) === 1,
    );
    const last = sent.at(-1);
    if (!last || !frames.some((f) => !f.sent && f.message[1] === last.message[1])) return undefined;
    const p = last.message[3] as { status?: string; connectorStatus?: string };
    return p.status ?? p.connectorStatus;
  }

  async function plugIn(): Promise<void> {
    await firmware().evse({ evPlugged: true, evsePlugged: true, evReady: true, evseReady: true });
    const plugged = version === '1.6' ? 'Preparing' : 'Occupied';
    await waitUntil(() => answeredStatus() === plugged, 10_000, `${plugged} answered`);
  }

  async function unplug(): Promise<void> {
    await firmware().evse({ evPlugged: false });
    await waitUntil(() => answeredStatus() === 'Available', 10_000, 'Available answered');
  }

  /** Waits until the firmware's register has moved `wh` past `from`. */
  async function registerPast(from: number, wh: number): Promise<void> {
    await waitUntil(
      async () => (await firmware().meter()).energy >= from + wh,
      30_000,
      `${wh} Wh delivered`,
    );
  }

  /**
   * One paid session from plug-in to unplug: `during` acts while it runs (pause, unplug,
   * restart). The firmware's meter is polled throughout for the power it reported.
   */
  async function paidSession(
    amount: number,
    during: (registerBefore: number) => Promise<void> = async () => {},
  ): Promise<Run> {
    await plugIn();
    const registerBefore = (await firmware().meter()).energy;
    const token = await mintToken(gw().url, API_KEY, DRIVERS.ada.email);
    const res = await startSession(
      gw().url,
      token,
      { chargerId: identity, connectorId: '1', driverEmail: DRIVERS.ada.email },
      amount,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = (res.body as { sessionId: string }).sessionId;
    let maxPower = 0;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        maxPower = Math.max(maxPower, (await firmware().meter()).power);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    try {
      await during(registerBefore);
      await waitUntil(() => session(id).state === 'settled', 60_000, `${id} settled`);
    } finally {
      polling = false;
      await poll;
    }
    const s = session(id);
    const registers = transactionRegisters(firmware(), s.transaction_ref, s.id_token);
    expect(registers.start, 'the start register the firmware sent').toBeTypeOf('number');
    expect(registers.stop, 'the stop register the firmware sent').toBeTypeOf('number');
    const registerAfter = (await firmware().meter()).energy;
    await unplug();
    costs.push(s.cost);
    return {
      id,
      session: s,
      firmwareWh: (registers.stop ?? 0) - (registers.start ?? 0),
      registerWh: registerAfter - registerBefore,
      oneSampleWh: Math.ceil((maxPower * SAMPLE_SECONDS) / 3600),
    };
  }

  /** What holds for every session, however it ended: billed on the firmware's meter, money exact. */
  function checkMoney(run: Run): void {
    const { id, session: s, firmwareWh, registerWh, oneSampleWh } = run;
    expect(s.state).toBe('settled');
    expect(oneSampleWh).toBeGreaterThan(0);
    // The firmware's register moves only inside its transaction (the meter reads whole Wh).
    expect(Math.abs(registerWh - firmwareWh)).toBeLessThanOrEqual(1);
    expect(s.delivered_wh).toBeLessThanOrEqual(firmwareWh);
    expect(s.delivered_wh).toBeGreaterThanOrEqual(firmwareWh - oneSampleWh);
    // docs/money.md: rounded down, capped at the amount paid.
    expect(s.cost).toBe(Math.min(s.amount, Math.floor((s.delivered_wh * PRICE_PER_KWH) / 1000)));
    expect(s.credited).toBe(s.amount - s.cost);
    const entries = store()
      .prepare('SELECT kind, amount FROM ledger_entries WHERE session_id = ? ORDER BY seq')
      .all(id);
    expect(entries).toEqual([
      { kind: 'session_debit', amount: -s.amount },
      { kind: 'session_credit', amount: s.credited },
    ]);
    const { balance } = store()
      .prepare('SELECT balance FROM wallets WHERE driver_id = ?')
      .get(DRIVERS.ada.id) as { balance: number };
    expect(balance).toBe(DRIVERS.ada.balance - costs.reduce((a, b) => a + b, 0));
    expect(verifyLedger(store()).checks.filter((c) => c.violations.length > 0)).toEqual([]);
  }

  /** The gateway stopped the session at its paid energy: neither early nor past one sample. */
  function checkStoppedAtPaid(run: Run): void {
    expect(run.session.end_reason).toBe('Remote');
    expect(run.firmwareWh).toBeLessThanOrEqual(run.session.limit_wh + run.oneSampleWh);
    expect(run.firmwareWh).toBeGreaterThanOrEqual(run.session.limit_wh - run.oneSampleWh);
  }

  it('stops at the paid energy', { timeout: CASE_MS }, async () => {
    const run = await paidSession(30);
    checkMoney(run);
    checkStoppedAtPaid(run);
  });

  it('an EV that unplugs early pays for what it took', { timeout: CASE_MS }, async () => {
    const run = await paidSession(40, async (before) => {
      await registerPast(before, 10);
      await firmware().evse({ evPlugged: false });
    });
    checkMoney(run);
    expect(run.session.end_reason).toBe('EVDisconnected');
    expect(run.firmwareWh).toBeLessThan(run.session.limit_wh - run.oneSampleWh);
    expect(run.session.credited).toBeGreaterThan(0);
  });

  it(
    'an EV that pauses and resumes is stopped at the paid energy',
    { timeout: CASE_MS },
    async () => {
      let paused = false;
      const run = await paidSession(40, async (before) => {
        await registerPast(before, 8);
        const from = firmware().frames.length;
        await firmware().evse({ evReady: false });
        // Two samples at 0 W, then the EV takes power again.
        await new Promise((r) => setTimeout(r, 2 * SAMPLE_SECONDS * 1000 + 500));
        paused = firmware()
          .frames.slice(from)
          .some((f) => f.sent && /"(status|chargingState)":"SuspendedEV"/.test(JSON.stringify(f)));
        await firmware().evse({ evReady: true });
      });
      expect(paused, 'the firmware reported SuspendedEV').toBe(true);
      checkMoney(run);
      checkStoppedAtPaid(run);
    },
  );

  it(
    'a firmware update and a log request to firmware built without an updater are refused by it, and the jobs say so',
    { timeout: CASE_MS },
    async () => {
      // MicroOcpp sets up its firmware and diagnostics services only on ESP32/ESP8266 (or with
      // mbedTLS): its Linux build answers both calls NotImplemented (docs/firmware-and-logs.md).
      const operator = createOperator(store(), `mo-${version}`, 'operator');
      const upload = await fetch(`${gw().url}/admin/v1/firmware?name=mo-1.2.1.bin`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${operator}`,
          'content-type': 'application/octet-stream',
        },
        body: new Uint8Array(4_096),
      });
      expect(upload.status).toBe(201);
      const { fileId } = (await upload.json()) as { fileId: string };
      const calls = [
        ['/firmware-update', { fileId }],
        ['/log-request', {}],
      ] as const;
      for (const [path, body] of calls) {
        const res = await op(gw().url, operator, 'POST', `/chargers/${identity}${path}`, body);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const answer = res.body as { accepted: boolean; status: string; job: { jobId: number } };
        expect(answer).toMatchObject({ accepted: false, status: 'CallError' });
        const read = await op(gw().url, operator, 'GET', `/transfer-jobs/${answer.job.jobId}`);
        expect((read.body as { job: unknown }).job).toMatchObject({
          status: 'Rejected',
          finished: true,
        });
      }
      // The charger still charges as before.
      const run = await paidSession(20);
      checkMoney(run);
      checkStoppedAtPaid(run);
    },
  );

  it(
    'a gateway SIGKILLed mid-session comes back and still stops at the paid energy',
    { timeout: CASE_MS },
    async () => {
      // The firmware retries 10 s after its last attempt (its default); with that more than 10 s
      // ago, its first retry comes as the link drops and fails, the next one 10 s later: back at
      // about 37 Wh, with the paid 45 Wh some 2.5 s later, time enough for the gateway to stop it.
      await waitUntil(() => Date.now() - firmware().connectedAt() > 10_500, 15_000, 'a quiet link');
      const run = await paidSession(45, async (before) => {
        await registerPast(before, 6);
        await gw().kill();
        gateway = await spawnGateway(configPath, lines);
      });
      checkMoney(run);
      checkStoppedAtPaid(run);
    },
  );

  /** The firmware's Authorize calls for `idTag` and the gateway's answers to them. */
  function authorizeAnswers(idTag: string): string[] {
    const frames = firmware().frames;
    return frames
      .filter((f) => f.sent && f.message[0] === 2 && f.message[2] === 'Authorize')
      .filter((f) => {
        const p = f.message[3] as { idTag?: string; idToken?: { idToken: string } };
        return (p.idTag ?? p.idToken?.idToken) === idTag;
      })
      .flatMap((call) => {
        const reply = frames.find(
          (f) => !f.sent && f.message[0] === 3 && f.message[1] === call.message[1],
        );
        const r = reply?.message[2] as {
          idTagInfo?: { status: string };
          idTokenInfo?: { status: string };
        };
        return reply ? [(r.idTagInfo ?? r.idTokenInfo)?.status ?? ''] : [];
      });
  }

  it(
    'a card the gateway does not accept, presented at the reader, is refused at Authorize and starts nothing',
    { timeout: CASE_MS },
    async () => {
      const card = version === '1.6' ? 'DEADBEEF01' : 'DEADBEEF02';
      const sessionsBefore = store().prepare('SELECT COUNT(*) AS n FROM sessions').get();
      await firmware().presentCard(card);
      await waitUntil(() => authorizeAnswers(card).length > 0, 10_000, 'Authorize answered');
      // A token bound to nobody: 1.6 has only Invalid for it, 2.0.1 says Unknown.
      expect(authorizeAnswers(card)).toEqual([version === '1.6' ? 'Invalid' : 'Unknown']);
      // The EV then comes: no transaction for the refused card (one sample interval to show one).
      await plugIn();
      await new Promise((r) => setTimeout(r, SAMPLE_SECONDS * 1000));
      const starts = [
        ...firmware().sentCalls('StartTransaction'),
        ...firmware().sentCalls('TransactionEvent'),
      ];
      expect(JSON.stringify(starts)).not.toContain(card);
      expect(store().prepare('SELECT COUNT(*) AS n FROM sessions').get()).toEqual(sessionsBefore);
      await unplug();
    },
  );

  it(
    "the session's own token presented at the reader ends its transaction; billed on the firmware's meter",
    { timeout: CASE_MS },
    async () => {
      const run = await paidSession(40, async (before) => {
        await registerPast(before, 8);
        const { id_token: token } = store()
          .prepare("SELECT id_token FROM sessions WHERE state = 'charging'")
          .get() as { id_token: string };
        // The gateway's remote start gave the firmware this token (2.0.1: of type Central).
        await firmware().presentCard(token, 'Central');
      });
      checkMoney(run);
      expect(run.session.end_reason).toBe('Local');
      expect(run.session.credited).toBeGreaterThan(0);
    },
  );
});
