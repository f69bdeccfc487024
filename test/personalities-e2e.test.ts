import { afterAll, beforeAll, describe, it, type ExpectStatic, type TestContext } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { configSchema } from '../src/config/schema.js';
import { PERSONALITIES, type PersonalityName } from '../simulators/shared/personalities.js';
import {
  API_KEY,
  DRIVERS,
  PASSWORD_HASH,
  startTestGateway,
  testConfig,
  type TestGateway,
} from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { IONIQ, PROTOCOLS, type SimulatedChargePoint } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

// Every firmware personality of the simulators, on both protocols, through the whole money path:
// mint → start → the simulator charges → stop (at the paid energy, or the driver unplugs) →
// settle. The simulator's own register is the truth the gateway's figures are checked against.
// The cases run a few at a time (vitest's maxConcurrency, 5), as a site's chargers do: each has
// its own charger, and its money is checked by its own session's ledger entries, so cases that
// share the driver's wallet cannot hide each other's errors.

const PRICE_PER_KWH = 412.5;
const AMOUNT = 1_000; // 2,424 Wh at 412.5 NGN/kWh
const SAMPLE_SECONDS = 10; // the test gateway's meterSampleIntervalSeconds
const MAX_POWER_W = 150_000;
// A quarter of the shared helpers' 120: a gateway slowed by a loaded machine still answers well
// within a sample interval (10 simulated s = 333 ms here). At 60 (167 ms) a CI run on a 2-core VM
// whose system calls are dear, two test files at a time, once stopped a paid session 214 ms of
// wall time past the paid energy (2,959 Wh delivered for a 2,424 Wh limit).
const TIME_FACTOR = 30;
/** One sample interval's worth of energy at the charger's full power. */
const SAMPLE_WH = Math.ceil((MAX_POWER_W * SAMPLE_SECONDS) / 3600);

/**
 * How a case is driven. 'paid': the gateway must stop the charger at the paid energy.
 * 'unplug': the charger reports no usable energy while charging, so the driver unplugs half way.
 * 'runaway': the charger keeps charging whatever it is told; the driver unplugs well past the
 * paid energy. 'local': the charger starts a transaction of its own (RFID). 'reboot': a power cut
 * mid-session after which the charger never reports the transaction again.
 */
type Flow = 'paid' | 'unplug' | 'runaway' | 'local' | 'reboot';

interface Case {
  personality: string;
  flow: Flow;
}

const FLOWS: Partial<Record<PersonalityName, Flow>> = {
  'no-energy': 'unplug',
  'no-meter-start': 'unplug',
  'ignores-stop': 'runaway',
  'rejects-stop': 'runaway',
  'local-start': 'local',
  'forgets-transaction-on-reboot': 'reboot',
};

function casesFor(protocol: 'ocpp1.6' | 'ocpp2.0.1'): Case[] {
  const single = (Object.keys(PERSONALITIES) as PersonalityName[])
    .filter((name) => {
      const { protocols } = PERSONALITIES[name];
      return protocols === 'both' || (protocols as readonly string[]).includes(protocol);
    })
    .map((name): Case => ({ personality: name, flow: FLOWS[name] ?? 'paid' }));
  return [
    { personality: '', flow: 'paid' },
    ...single,
    // Deviations seen together on one charger.
    {
      personality:
        protocol === 'ocpp1.6'
          ? 'numeric-values,lowercase-units,clock-skew=-5,no-millis-timestamps,vendor-fields,no-txid-meter'
          : 'lowercase-units,clock-skew=-5,no-millis-timestamps,vendor-fields,per-phase',
      flow: 'paid',
    },
    // A stop it ignores, a zero-power profile it obeys: the escalation ends the energy.
    { personality: 'ignores-stop,obeys-profile', flow: 'runaway' },
  ];
}

/**
 * Stop assurance (escalation ladder, operator loss), stopping unaccepted transactions and recovery
 * that asks the charger come with the field-session work; until it is on main the cases that need
 * it say so and are skipped.
 */
function stopAssuranceLanded(t: TestGateway): boolean {
  return (
    t.gw.db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'operator_losses'")
      .get() !== undefined
  );
}

/** Whether the gateway's configuration knows a setting (some come with field-session's work). */
function configKnows(change: (config: ReturnType<typeof testConfig>) => object): boolean {
  return configSchema.safeParse(change(testConfig('/tmp/probe.db'))).success;
}

/**
 * The simulator's power as the gateway's plausibility rule must see it: it runs TIME_FACTOR times
 * faster than real time.
 */
function connectorPower(): Record<string, number> {
  const known = configKnows((config) => ({
    ...config,
    chargers: [
      {
        id: 'X',
        passwordHash: PASSWORD_HASH,
        connectors: [{ id: '1', tariff: 'dc', maxPowerKw: 1 }],
      },
    ],
  }));
  return known ? { maxPowerKw: (MAX_POWER_W / 1000) * TIME_FACTOR } : {};
}

/**
 * The stop ladder's pauses in real seconds, scaled like the simulator's time: a step is checked
 * after a few sample intervals (10 simulated s = 167 ms here), not after a real minute.
 */
function stopLadderTiming(): Record<string, number> {
  const timing = { stopRetrySeconds: 0.2, stopVerifySeconds: 0.5 };
  const known = configKnows((config) => ({
    ...config,
    sessions: { ...config.sessions, ...timing },
  }));
  return known ? timing : {};
}

interface SessionRow {
  id: string;
  state: string;
  amount: number;
  delivered_wh: number | null;
  cost: number | null;
  limit_wh: number;
  end_reason: string | null;
}

describe.each(PROTOCOLS)('firmware personalities end to end: $name', (protocol) => {
  const version = protocol.name === 'OCPP 1.6J' ? 'ocpp1.6' : 'ocpp2.0.1';
  const cases = casesFor(version).map((c, index) => ({ ...c, chargerId: `PERS-${index}` }));
  let t: TestGateway;
  let landed = false;

  beforeAll(async () => {
    const base = testConfig('');
    t = await startTestGateway({
      sessions: {
        startTimeoutSeconds: 2,
        maxAmount: 1_000_000,
        stopLeadMilliseconds: 0,
        // A connector showing no transaction waits this long for the charger's stop message:
        // a simulated minute, like the ladder's pauses below.
        stopGraceSeconds: 60 / TIME_FACTOR,
        ...stopLadderTiming(),
      },
      // One charger id per case: nothing learnt about one firmware (clock offset) leaks.
      chargers: [
        ...base.chargers,
        ...cases.map((c) => ({
          id: c.chargerId,
          passwordHash: PASSWORD_HASH,
          connectors: [{ id: '1', tariff: 'dc', ...connectorPower() }],
        })),
      ],
    });
    landed = stopAssuranceLanded(t);
  });
  afterAll(async () => {
    await t.close();
  });

  async function charger(
    ctx: TestContext,
    id: string,
    personality: string,
  ): Promise<SimulatedChargePoint> {
    const cp = await protocol.connect(t.gw.ocppUrl, id, {
      connectors: 1,
      personality,
      timeFactor: TIME_FACTOR,
    });
    ctx.onTestFinished(() => cp.disconnect());
    await waitUntil(
      () =>
        t.gw.db
          .prepare('SELECT 1 FROM charger_info WHERE charger_id = ? AND booted_at IS NOT NULL')
          .get(id),
      5000,
      'boot',
    );
    // A sample interval that awaits a reboot: the gateway resets the charger, and refuses Starts
    // (charger_unmetered) until it comes back with the interval held.
    if (personality.includes('interval-after-reboot')) {
      await waitUntil(
        () =>
          t.gw.db
            .prepare(
              "SELECT 1 FROM ocpp_events WHERE charger_id = ? AND note LIKE 'sampling holds%'",
            )
            .get(id),
        10_000,
        'interval held after the reset',
      );
    }
    return cp;
  }
  /** What this session's ledger entries moved in the wallet (debit, refund, credit), NGN. */
  const moved = (sessionId: string): number =>
    (
      t.gw.db
        .prepare('SELECT COALESCE(SUM(amount), 0) AS n FROM ledger_entries WHERE session_id = ?')
        .get(sessionId) as { n: number }
    ).n;
  const session = (id: string) =>
    t.gw.db.prepare('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow;
  const finished = (id: string) => {
    const s = session(id);
    return s.state === 'settled' || s.state === 'refunded' ? s : undefined;
  };

  /** The money rules that hold for every personality, whatever happened on the wire. */
  function assertMoney(expect: ExpectStatic, s: SessionRow, trueDeliveredWh: number): void {
    const proven = s.delivered_wh ?? 0;
    // Never billed for energy not proven, nor for more than the charger really delivered.
    expect(proven).toBeLessThanOrEqual(trueDeliveredWh);
    expect(s.cost ?? 0).toBeLessThanOrEqual(Math.floor((proven * PRICE_PER_KWH) / 1000));
    expect(s.cost ?? 0).toBeLessThanOrEqual(s.amount);
    // The wallet paid exactly the session's cost: its debit less what was given back.
    expect(s.cost ?? 0).toBe(0 - moved(s.id));
    const report = verifyLedger(t.gw.db);
    expect(report.checks.filter((c) => c.violations.length > 0)).toEqual([]);
  }

  async function startPaidSession(
    expect: ExpectStatic,
    cp: SimulatedChargePoint,
    chargerId: string,
  ) {
    await cp.plugIn(1, IONIQ);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const started = cp.waitFor('transactionStarted', () => true, 10_000);
    const res = await startSession(
      t.gw.url,
      token,
      { chargerId, connectorId: '1', driverEmail: DRIVERS.ada.email },
      AMOUNT,
    );
    expect(res.status).toBe(200);
    const { sessionId } = res.body as { sessionId: string };
    return { sessionId, tx: await started };
  }

  const runnable = (c: { flow: Flow }) => c.flow === 'paid' || c.flow === 'unplug';

  it.concurrent.for(cases.filter(runnable))(
    '$personality: stopped at the paid energy or the unplug, billed only what was proven',
    async (c, ctx) => {
      const { expect } = ctx;
      const cp = await charger(ctx, c.chargerId, c.personality);
      const { sessionId, tx } = await startPaidSession(expect, cp, c.chargerId);
      const stopped = cp.waitFor('transactionStopped', () => true, 20_000);
      if (c.flow === 'unplug') {
        // The gateway may stop it first (it cannot tell the energy); else the driver unplugs.
        const halfWay = cp.waitFor(
          'meterValues',
          (m) => m.transactionId === tx.transactionId && m.registerWh - tx.meterStart > 1000,
        );
        halfWay.catch(() => undefined);
        await Promise.race([halfWay, stopped]);
        if (cp.state(1).transactionId !== undefined) await cp.unplug(1);
      }
      const stop = await stopped;
      const trueDelivered = stop.meterStop - tx.meterStart;
      const s = await waitUntil(() => finished(sessionId), 10_000, 'settlement');
      expect(s.state).toBe('settled');
      assertMoney(expect, s, trueDelivered);
      if (c.flow === 'paid') {
        // The charger delivered what was paid for, give or take one sample interval.
        expect(trueDelivered).toBeGreaterThanOrEqual(s.limit_wh - SAMPLE_WH);
        expect(trueDelivered).toBeLessThanOrEqual(s.limit_wh + SAMPLE_WH);
        expect(s.delivered_wh ?? 0).toBeGreaterThanOrEqual(s.limit_wh - SAMPLE_WH);
      }
    },
  );

  it.concurrent.for(cases.filter((c) => c.flow === 'local'))(
    '$personality: a transaction the charger starts on its own moves no money',
    async (c, ctx) => {
      const { expect } = ctx;
      if (!landed) ctx.skip('stopping unaccepted transactions (field-session) is not on main yet');
      const cp = await charger(ctx, c.chargerId, c.personality);
      const started = cp.waitFor('transactionStarted', () => true, 10_000);
      // Listened for before the plug-in: a charger that stops itself on the Invalid answer
      // (StopTransactionOnInvalidId) has ended the transaction by the time plugIn returns.
      const stopped = cp.waitFor('transactionStopped', () => true, 10_000);
      await cp.plugIn(1, IONIQ);
      const tx = await started;
      expect(tx.idTag).toBe('RFID-LOCAL-01');
      // The gateway does not accept the unknown badge: the transaction ends before any energy
      // worth billing (the charger stops itself, or the gateway stops it).
      const stop = await stopped;
      expect(stop.meterStop - tx.meterStart).toBeLessThanOrEqual(SAMPLE_WH);
      const sessions = t.gw.db
        .prepare('SELECT COUNT(*) AS n FROM sessions WHERE charger_id = ?')
        .get(c.chargerId) as { n: number };
      // No session, so no ledger entry: the wallet was not touched.
      expect(sessions.n).toBe(0);
      const report = verifyLedger(t.gw.db);
      expect(report.checks.filter((check) => check.violations.length > 0)).toEqual([]);
    },
  );

  it.concurrent.for(cases.filter((c) => c.flow === 'runaway'))(
    '$personality: a stop that does not take is escalated and the overrun is the operator loss',
    async (c, ctx) => {
      const { expect } = ctx;
      if (!landed) ctx.skip('stop assurance (field-session) is not on main yet');
      const cp = await charger(ctx, c.chargerId, c.personality);
      const remoteStops: unknown[] = [];
      const profiles: unknown[] = [];
      cp.on('remoteStop', (e) => remoteStops.push(e));
      cp.on('chargingProfile', (e) => profiles.push(e));
      const { sessionId, tx } = await startPaidSession(expect, cp, c.chargerId);
      // Every simulated charger obeys profiles unless its personality says otherwise.
      const obeysProfile = !/ignores-profile|rejects-profiles|profiles-not-supported/.test(
        c.personality,
      );
      const stopped = cp.waitFor('transactionStopped', () => true, 30_000);
      const ladderSteps = () =>
        (
          t.gw.db.prepare('SELECT step FROM stop_attempts WHERE session_id = ?').all(sessionId) as {
            step: string;
          }[]
        ).map((row) => row.step);
      // The ladder ends the energy (a zero-power profile obeyed, an unlock), or runs out of steps
      // while the charger keeps going: then the driver unplugs, well past the paid energy.
      let ended = false;
      void stopped.then(() => (ended = true)).catch(() => undefined);
      await waitUntil(
        () =>
          ended ||
          (obeysProfile && profiles.length > 0 && cp.state(1).powerW === 0) ||
          ladderSteps().includes('unlock'),
        30_000,
        'the stop ladder',
      );
      if (cp.state(1).transactionId !== undefined) await cp.unplug(1);
      const stop = await stopped;
      const trueDelivered = stop.meterStop - tx.meterStart;
      const s = await waitUntil(() => finished(sessionId), 10_000, 'settlement');
      assertMoney(expect, s, trueDelivered);
      // The ladder: the stop was asked again, then a zero-power profile was tried.
      expect(remoteStops.length).toBeGreaterThanOrEqual(2);
      expect(trueDelivered).toBeGreaterThan(s.limit_wh);
      if (obeysProfile) expect(profiles.length).toBeGreaterThanOrEqual(1);
      const steps = ladderSteps();
      expect(steps).toContain('remote_stop');
      expect(steps).toContain('zero_power');
      const loss = t.gw.db
        .prepare('SELECT SUM(wh) AS wh FROM operator_losses WHERE session_id = ?')
        .get(sessionId) as { wh: number | null };
      expect(loss.wh ?? 0).toBeGreaterThan(0);
      expect(loss.wh ?? 0).toBeLessThanOrEqual(Math.max(0, trueDelivered - s.limit_wh) + SAMPLE_WH);
    },
  );

  it.concurrent.for(cases.filter((c) => c.flow === 'reboot'))(
    '$personality: a transaction lost in a power cut is recovered from the charger and settled',
    async (c, ctx) => {
      const { expect } = ctx;
      if (!landed) ctx.skip('recovery that asks the charger (field-session) is not on main yet');
      const cp = await charger(ctx, c.chargerId, c.personality);
      const { sessionId, tx } = await startPaidSession(expect, cp, c.chargerId);
      const last = await cp.waitFor(
        'meterValues',
        (m) => m.transactionId === tx.transactionId && m.registerWh - tx.meterStart > 800,
      );
      await cp.disconnect();
      await cp.connect();
      // The charger now has no transaction and never sends its end; the gateway must find out.
      expect(cp.state(1).transactionId).toBeUndefined();
      const s = await waitUntil(() => finished(sessionId), 20_000, 'recovery');
      const trueDelivered = cp.state(1).registerWh - tx.meterStart;
      assertMoney(expect, s, trueDelivered);
      expect(s.delivered_wh ?? 0).toBeGreaterThanOrEqual(last.registerWh - tx.meterStart);
    },
  );

  // After every case (the concurrent ones run before it): the shared wallet lost exactly what the
  // sessions cost, so no case moved money outside its own session (a local start, a recovery).
  it('the wallet paid the sum of the sessions’ costs and nothing else', ({ expect }) => {
    const open = t.gw.db
      .prepare("SELECT COUNT(*) AS n FROM sessions WHERE state NOT IN ('settled', 'refunded')")
      .get() as { n: number };
    expect(open.n).toBe(0);
    const { cost } = t.gw.db
      .prepare('SELECT COALESCE(SUM(cost), 0) AS cost FROM sessions WHERE driver_id = ?')
      .get(DRIVERS.ada.id) as { cost: number };
    const { balance } = t.gw.db
      .prepare('SELECT balance FROM wallets WHERE driver_id = ?')
      .get(DRIVERS.ada.id) as { balance: number };
    expect(balance).toBe(DRIVERS.ada.balance - cost);
  });
});
