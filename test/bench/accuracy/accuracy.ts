import Database from 'better-sqlite3';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ChargePoint21 } from '../../../simulators/ocpp21/charge-point.js';
import type { VehicleSpec } from '../../../simulators/shared/simulated-charge-point.js';
import { hashPassword } from '../../../src/ocpp/connection/charger-password.js';
import { UNPHYSICAL_KW } from '../../helpers/gateway.js';
import { mintToken, startSession } from '../../helpers/http.js';
import { PROTOCOLS, type ProtocolUnderTest } from '../../helpers/simulated-charger.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  driverEmail,
  startGatewayChild,
  type GatewayChild,
} from '../lib/gateway-child.js';
import type { BenchContext, BenchSection, Figure, Section } from '../lib/results.js';
import { percentile } from '../lib/stats.js';

/**
 * Issue 7 part 5: paid-energy overshoot and undershoot. Real gateway (a child process), real
 * simulators (in the bench process) over real sockets, the paid-energy stop as it runs on a site.
 * The only thing asserted is the money rule (overshoot is never debited): a violation throws.
 *
 * The simulators run faster than real time, so each wall-clock millisecond of stop latency (the
 * gateway's, the network's, the simulator's event loop) is `timeFactor` simulated milliseconds of
 * energy: the stop lead is scaled the same way (250 ms on a real site = 250 / timeFactor ms here),
 * and any event-loop delay is magnified by the time factor, so these figures overstate what a
 * real-time site sees.
 */
/**
 * Time factors: each level gets 65-110 ms of wall-clock slack before the 0.5 % target (0.5 % of
 * the paid energy over the power, divided by the time factor). measure:overshoot ran AC at 300
 * and DC at 60 (40-65 ms): on a loaded 2-core machine scheduling delays alone went past that.
 */
interface Profile {
  name: string;
  tariff: 'ac' | 'dc';
  maxPowerW: number;
  amount: number;
  /** micro-NGN per Wh of the tariff in the bench config (test/helpers/gateway.ts testConfig). */
  microNgnPerWh: number;
  timeFactor: number;
  vehicle: VehicleSpec;
}

const PROFILES: Profile[] = [
  {
    name: 'AC 7.4 kW',
    tariff: 'ac',
    maxPowerW: 7_400,
    amount: 2_000, // 8,000 Wh at 250 NGN/kWh: about 65 simulated minutes
    microNgnPerWh: 250_000,
    timeFactor: 150,
    vehicle: { model: 'BYD Atto 3', batteryKwh: 60.5, socPercent: 20, maxPowerW: 11_000 },
  },
  {
    name: 'AC 22 kW',
    tariff: 'ac',
    maxPowerW: 22_000,
    amount: 5_000, // 20,000 Wh at 250 NGN/kWh: about 55 simulated minutes
    microNgnPerWh: 250_000,
    timeFactor: 150,
    vehicle: { model: 'Renault Zoe R135', batteryKwh: 52, socPercent: 20, maxPowerW: 22_000 },
  },
  {
    name: 'DC 150 kW',
    tariff: 'dc',
    maxPowerW: 150_000,
    amount: 10_000, // 24,242 Wh at 412.5 NGN/kWh: about 10 simulated minutes
    microNgnPerWh: 412_500,
    timeFactor: 30,
    vehicle: { model: 'Hyundai Ioniq 5', batteryKwh: 77.4, socPercent: 10, maxPowerW: 220_000 },
  },
];
const INTERVALS_S = [10, 30, 60];
const REAL_STOP_LEAD_MS = 250;
const TARGET_PERCENT = 0.5;
/** Seconds (before BENCH_SCALE) during which each charger starts sessions, one after another. */
const WINDOW_S = 70;

interface Result {
  protocol: string;
  profile: string;
  intervalS: number;
  limitWh: number;
  deliveredWh: number;
}

/** One gateway per meter interval and time factor (both are gateway-wide settings). */
interface Group {
  intervalS: number;
  timeFactor: number;
  profiles: Profile[];
}

export const accuracySection: BenchSection = {
  key: 'accuracy',
  title: 'Paid-energy accuracy: delivered against paid energy',
  async run(ctx) {
    const groups: Group[] = INTERVALS_S.flatMap((intervalS) =>
      [...new Set(PROFILES.map((p) => p.timeFactor))].map((timeFactor) => ({
        intervalS,
        timeFactor,
        profiles: PROFILES.filter((p) => p.timeFactor === timeFactor),
      })),
    );
    const deadline = Date.now() + ctx.window(WINDOW_S) * 1000;
    const results: Result[] = [];
    // The simulators' event-loop delay is energy too (times the time factor): it is reported.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    // Every group at once: each charger runs sessions back to back until the window closes.
    await Promise.all(groups.map((g) => runGroup(ctx, g, deadline, results)));
    loopDelay.disable();
    const measured = report(results, ctx);
    measured.notes.push(
      `Event-loop delay of the bench process (the simulators) during the run: p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms, ` +
        `max ${(loopDelay.max / 1e6).toFixed(1)} ms; load average ${loadavg()[0]?.toFixed(1)} at the end on ${cpus().length} cores.`,
    );
    return measured;
  },
};

const PASSWORD_HASH = hashPassword(CHARGER_PASSWORD);

/**
 * The 2.1 row: the 2.0.1 station on ocpp2.1, enforcing the transactionLimit the gateway hands it
 * (the paid energy): whichever line comes first stops the session, the station's or the gateway's.
 */
const OCPP21: ProtocolUnderTest = {
  name: 'OCPP 2.1',
  async connect(ocppUrl, identity, options = {}) {
    const cp = new ChargePoint21({
      url: ocppUrl,
      identity,
      password: CHARGER_PASSWORD,
      connectors: 1,
      ...options,
    });
    await cp.connect();
    return cp;
  },
};

const BENCH_PROTOCOLS: ProtocolUnderTest[] = [...PROTOCOLS, OCPP21];

function chargerId(profile: Profile, protocol: ProtocolUnderTest): string {
  const p = protocol.name.endsWith('1.6J') ? '16' : protocol.name.endsWith('2.1') ? '21' : '201';
  return `${profile.name.replace(/[^A-Za-z0-9]+/g, '')}-${p}`;
}

async function runGroup(
  ctx: BenchContext,
  g: Group,
  deadline: number,
  results: Result[],
): Promise<void> {
  const cells = g.profiles.flatMap((profile) =>
    BENCH_PROTOCOLS.map((protocol) => ({ profile, protocol })),
  );
  const gw = await startGatewayChild(
    ctx.tempDir(),
    { chargers: [], connectors: 1, drivers: cells.length, balance: 10_000_000 },
    {
      chargers: cells.map(({ profile, protocol }) => ({
        id: chargerId(profile, protocol),
        passwordHash: PASSWORD_HASH,
        connectors: [{ id: '1', tariff: profile.tariff, maxPowerKw: UNPHYSICAL_KW }],
      })),
      ocpp: {
        meterSampleIntervalSeconds: g.intervalS,
        callTimeoutSeconds: 5,
        // At time factor 300 a 10 s interval is 30 samples a second: far above the default limit.
        messageRate: { perSecond: 10_000, burst: 100_000 },
      },
      sessions: {
        startTimeoutSeconds: 30,
        maxAmount: 1_000_000,
        stopLeadMilliseconds: Math.round(REAL_STOP_LEAD_MS / g.timeFactor),
      },
    },
  );
  const db = new Database(gw.dbPath, { readonly: true, fileMustExist: true });
  try {
    await Promise.all(
      cells.map((cell, i) =>
        runCharger(gw, db, g, cell.profile, cell.protocol, i, deadline, results),
      ),
    );
    ctx.log(`meter interval ${g.intervalS} s, time factor ${g.timeFactor}: done`);
  } finally {
    db.close();
    await gw.stop();
  }
}

async function poll<T>(read: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Sessions one after another on one simulated charger until the window closes (at least one). */
async function runCharger(
  gw: GatewayChild,
  db: Database.Database,
  g: Group,
  profile: Profile,
  protocol: ProtocolUnderTest,
  driver: number,
  deadline: number,
  results: Result[],
): Promise<void> {
  const id = chargerId(profile, protocol);
  const cp = await protocol.connect(gw.ocppUrl, id, {
    connectors: 1,
    maxPowerW: profile.maxPowerW,
    timeFactor: profile.timeFactor,
  });
  try {
    await poll(
      () =>
        db
          .prepare('SELECT 1 FROM charger_info WHERE charger_id = ? AND booted_at IS NOT NULL')
          .get(id),
      10_000,
      `${id} boot`,
    );
    // The sample interval is configured after boot: give the charger a moment to take it.
    await new Promise((r) => setTimeout(r, 200));
    const email = driverEmail(driver);
    const token = await mintToken(gw.url, API_KEY, email);
    do {
      await cp.plugIn(1, profile.vehicle);
      const res = await startSession(
        gw.url,
        token,
        { chargerId: id, connectorId: '1', driverEmail: email },
        profile.amount,
      );
      if (res.status !== 200)
        throw new Error(`start on ${id}: ${res.status} ${JSON.stringify(res.body)}`);
      const { sessionId } = res.body as { sessionId: string };
      const row = await poll(
        () =>
          db
            .prepare(
              "SELECT limit_wh, delivered_wh, cost, credited FROM sessions WHERE id = ? AND state = 'settled'",
            )
            .get(sessionId) as
            { limit_wh: number; delivered_wh: number; cost: number; credited: number } | undefined,
        5 * 60_000,
        `settlement of ${sessionId}`,
      );
      // The money rule: energy beyond what was paid is never debited.
      const expectedCost = Math.min(
        profile.amount,
        Math.floor((row.delivered_wh * profile.microNgnPerWh) / 1e6),
      );
      if (
        row.cost > profile.amount ||
        row.credited !== profile.amount - row.cost ||
        row.cost !== expectedCost
      )
        throw new Error(
          `money rule broken on ${id} session ${sessionId}: paid ${profile.amount}, delivered ` +
            `${row.delivered_wh} Wh, cost ${row.cost} (expected ${expectedCost}), credited ${row.credited}`,
        );
      results.push({
        protocol: protocol.name,
        profile: profile.name,
        intervalS: g.intervalS,
        limitWh: row.limit_wh,
        deliveredWh: row.delivered_wh,
      });
      // A 1.6 charger reports Finishing only once its StopTransaction is answered: unplugging
      // before that puts the Available ahead of it, and the gateway would keep the connector
      // Finishing. (A 2.0.1 station stays Occupied until the cable goes.)
      if (protocol.name.endsWith('1.6J'))
        await poll(
          () =>
            db
              .prepare(
                "SELECT 1 FROM connector_state WHERE charger_id = ? AND connector_id = '1' AND status = 'finishing'",
              )
              .get(id),
          10_000,
          `${id} finishing`,
        );
      await cp.unplug(1);
      // The next Start must find the connector free: wait until the gateway has the unplug.
      await poll(
        () =>
          db
            .prepare(
              "SELECT 1 FROM connector_state WHERE charger_id = ? AND connector_id = '1' AND status = 'available'",
            )
            .get(id),
        10_000,
        `${id} available again`,
      );
    } while (Date.now() < deadline);
  } finally {
    await cp.disconnect();
  }
}

const pct = (wh: number, of: number) => (100 * wh) / of;

function report(results: Result[], ctx: BenchContext): Omit<Section, 'key' | 'title' | 'seconds'> {
  const figures: Figure[] = [];
  const notes: string[] = [];
  for (const profile of PROFILES) {
    const rs = results.filter((r) => r.profile === profile.name);
    if (rs.length === 0) continue;
    const limit = (rs[0] as Result).limitWh;
    const over = rs.map((r) => Math.max(0, r.deliveredWh - r.limitWh));
    const under = rs.map((r) => Math.max(0, r.limitWh - r.deliveredWh));
    const worstOver = Math.max(...over);
    const p99Over = percentile(over, 99);
    const worstUnder = Math.max(...under);
    const target = `≤ ${TARGET_PERCENT} % of paid`;
    figures.push({
      name: `${profile.name}: worst overshoot`,
      unit: '% of paid',
      gateway: pct(worstOver, limit),
      target,
      met: pct(worstOver, limit) <= TARGET_PERCENT,
      note:
        `${worstOver} Wh of ${limit} Wh, ${rs.length} sessions; ` +
        `= ${((worstOver * 3_600_000) / profile.maxPowerW / profile.timeFactor).toFixed(0)} ms of wall time late at time factor ${profile.timeFactor}`,
    });
    figures.push({
      name: `${profile.name}: p99 overshoot`,
      unit: '% of paid',
      gateway: pct(p99Over, limit),
      target,
      met: pct(p99Over, limit) <= TARGET_PERCENT,
      note: `${p99Over} Wh`,
    });
    figures.push({
      name: `${profile.name}: worst undershoot`,
      unit: '% of paid',
      gateway: pct(worstUnder, limit),
      note: `${worstUnder} Wh`,
    });
    const cells = INTERVALS_S.flatMap((intervalS) =>
      BENCH_PROTOCOLS.map((protocol) => {
        const c = rs.filter((r) => r.intervalS === intervalS && r.protocol === protocol.name);
        const d = c.map((r) => r.deliveredWh - r.limitWh);
        if (c.length === 0) return `${protocol.name.replace('OCPP ', '')} ${intervalS} s: none`;
        return `${protocol.name.replace('OCPP ', '')} ${intervalS} s: ${c.length} × [${Math.min(...d)}, ${Math.max(...d)}] Wh`;
      }),
    );
    notes.push(
      `${profile.name} (paid ${limit} Wh, delivered − paid per cell, min and max): ${cells.join('; ')}.`,
    );
  }
  figures.push({
    name: 'Debited beyond what was paid, every session',
    unit: 'NGN',
    gateway: 0,
    target: '0 NGN',
    met: true,
    note: `${results.length} sessions; a violation stops the bench`,
  });
  notes.unshift(
    `One gateway child per meter interval (${INTERVALS_S.join(', ')} s) and time factor, all at once; the real simulators (1.6J, 2.0.1 and 2.1, one charger per power level and protocol) in the bench process, ` +
      `each running sessions back to back for ${ctx.window(WINDOW_S)} s (the last one finishes after): ` +
      PROFILES.map(
        (p) =>
          `${p.name} ${p.amount} NGN, ${p.vehicle.model} ${p.vehicle.batteryKwh} kWh at ${p.vehicle.socPercent} %, time factor ${p.timeFactor}`,
      ).join('; ') +
      '.',
    `Stop lead ${REAL_STOP_LEAD_MS} ms of real time, scaled to the time factor (${PROFILES.map(
      (p) => `${Math.round(REAL_STOP_LEAD_MS / p.timeFactor)} ms at ${p.timeFactor}`,
    )
      .filter((v, i, a) => a.indexOf(v) === i)
      .join(', ')}). ` +
      "At time factor 150 every millisecond of event-loop delay (gateway, bench process, machine load) is 0.15 simulated seconds of charging (0.31 Wh at 7.4 kW, 0.92 Wh at 22 kW); at 30 it is 1.25 Wh at 150 kW. The stop is planned from the rate measured on the gateway's receive clock over the last two samples, so a sample that arrives late (scheduling on a loaded machine) skews the plan by the same factor: these figures overstate what a real-time site sees.",
  );
  return { figures, notes };
}
