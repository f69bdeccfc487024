import Database from 'better-sqlite3';
import { createOperator } from '../../helpers/operator.js';
import { LoadSite, SITE_CHARGERS, siteConfig, type SiteGateway } from '../../helpers/load-site.js';
import type { TracePoint } from '../../helpers/site-trace.js';
import { driverEmail, startGatewayChild } from '../lib/gateway-child.js';
import { comparedRounds, type BenchSection, type Figure } from '../lib/results.js';
import { percentile } from '../lib/stats.js';
import { bareProfileRoundTrips } from './bare-profile.js';

/**
 * Issue 17's benchmark: the 12-connector depot of test/load-site.test.ts (OCPP 1.6J AC and 2.0.1
 * DC, one charger refusing profiles) against the real gateway in its own process, the simulators
 * and the WireTap in this one. Every connector charges a paid session while the operator moves
 * the site limit between the contract and a lower value; the trace is the site's power summed
 * from the meter values on the wire. Reported: how far and how long the measured power was over
 * the limit, and the time from a limit change to the last charging profile it caused being
 * accepted, against one bare SetChargingProfile round trip through the same tap in the same run.
 * A violation of the site test's tolerance rule or of the money rule stops the bench.
 */

const TIME_FACTOR = 40;
const QUIET_MS = (2 * 10_000) / TIME_FACTOR;
const CONTRACT_KW = 150;
const LOWER_KW = 60;
/** Large enough that no session reaches its paid energy during the bench: drivers stop them. */
const AMOUNT = 20_000;

export const loadSection: BenchSection = {
  key: 'load',
  title: 'Site power limit: measured site power and reallocation',
  async run(ctx) {
    const dir = ctx.tempDir();
    const drivers = SITE_CHARGERS.length * 2;
    const child = await startGatewayChild(
      dir,
      { chargers: [], connectors: 2, drivers, balance: 1_000_000 },
      siteConfig(TIME_FACTOR, { power: { limitKw: CONTRACT_KW } }),
    );
    const db = new Database(child.dbPath);
    db.pragma('busy_timeout = 5000');
    const gw: SiteGateway = {
      url: child.url,
      ocppUrl: child.ocppUrl,
      operatorUrl: child.url,
      db,
      driverEmails: Array.from({ length: drivers }, (_, i) => driverEmail(i)),
      operatorCredential: createOperator(db, 'bench', 'operator'),
      async close() {
        db.close();
        await child.stop();
      },
    };
    const site = await LoadSite.start(gw, {
      limitW: CONTRACT_KW * 1000,
      timeFactor: TIME_FACTOR,
    });
    const ROUNDS = ctx.rounds(3);
    const perRound = Math.max(2, Math.round(ctx.window(20) / ROUNDS));
    const changes = perRound * ROUNDS;
    const barePerRound = Math.ceil(Math.max(20, ctx.window(200)) / ROUNDS);
    /** Per round: reallocation latencies, the gateway's profile round trips, the bare ones. */
    const latencies: number[][] = [];
    const gatewayRoundTrips: number[][] = [];
    const bare: number[][] = [];
    try {
      for (const c of SITE_CHARGERS) {
        await site.startSession(c.id, 1, AMOUNT);
        await site.startSession(c.id, 2, AMOUNT);
      }
      await site.settle(QUIET_MS);
      // Session starts and stops are the site test's to judge (test/load-site.test.ts): the
      // bench judges and measures the limit changes.
      const traceFrom = site.trace.points.length;
      const violationsFrom = site.trace.violations.length;
      // Each round: its share of the limit changes, then the bare round trips, the sessions still
      // charging (the bare charger shares this process with theirs, as the gateway's do).
      for (let round = 0, i = 0; round < ROUNDS; round++) {
        ctx.log(
          `round ${round + 1} of ${ROUNDS}: ${perRound} limit changes, ${barePerRound} bare round trips`,
        );
        const roundTrips = site.trace.profileRoundTrips.length;
        const caused: number[] = [];
        for (let k = 0; k < perRound; k++, i++) {
          const t0 = performance.now();
          const lower = i % 2 === 0;
          await site.operatorLimit(lower ? LOWER_KW * 1000 : null, CONTRACT_KW * 1000);
          await site.settle(QUIET_MS);
          const sent = site.trace.profileRoundTrips.filter((r) => r.sentMs >= t0);
          if (sent.length > 0) caused.push(Math.max(...sent.map((r) => r.answeredMs)) - t0);
        }
        latencies.push(caused);
        gatewayRoundTrips.push(
          site.trace.profileRoundTrips.slice(roundTrips).map((r) => r.answeredMs - r.sentMs),
        );
        bare.push(await bareProfileRoundTrips(barePerRound, TIME_FACTOR));
      }
      const violations = site.trace.violations.slice(violationsFrom);
      const traceTo = site.trace.points.length;
      for (const s of site.sessions) await site.stopAtCharger(s);
      await site.allEnded(30_000);
      const problems = [
        ...violations.map((v) => `${v.what} (${v.site ?? ''})`),
        ...site.billingProblems(),
      ];
      if (problems.length > 0) throw new Error(`load bench: ${problems.slice(0, 5).join('; ')}`);
      if (latencies.some((l) => l.length === 0))
        throw new Error('load bench: no limit change of a round sent a profile');
      const summary = summarize(site.trace.points.slice(traceFrom, traceTo));
      const each = (rounds: number[][], p: number) => rounds.map((r) => percentile(r, p));
      const figures: Figure[] = [
        comparedRounds(
          'reallocation p50: limit change → last profile accepted',
          'ms',
          each(latencies, 50),
          { label: 'one bare SetChargingProfile round trip p50', rounds: each(bare, 50) },
        ),
        comparedRounds('reallocation p99', 'ms', each(latencies, 99), {
          label: 'one bare SetChargingProfile round trip p99',
          rounds: each(bare, 99),
        }),
        comparedRounds(
          'one SetChargingProfile round trip through the gateway, p50',
          'ms',
          each(gatewayRoundTrips, 50),
          { label: 'bare p50', rounds: each(bare, 50) },
        ),
        {
          name: 'measured site power over the limit, most (lower windows included)',
          unit: 'kW',
          gateway: summary.maxOverW / 1000,
        },
        {
          name: 'time the measured site power was over the limit (lower windows included)',
          unit: 'ms',
          gateway: summary.overMs,
        },
        {
          name: 'measured site power over the limit once lowers landed (tolerance rule), most',
          unit: 'kW',
          gateway: summary.maxSettledOverBoundW / 1000,
        },
        {
          name: 'allowances in force over the new limit, most (lower windows included)',
          unit: 'kW',
          gateway: summary.maxAllowedOverW / 1000,
        },
      ];
      return {
        figures,
        notes: [
          `Gateway: \`dist/cli.js serve\` child, power.limitKw ${CONTRACT_KW}, policy equal; 12 connectors: ${SITE_CHARGERS.map((c) => `${c.id} (${c.kind.toUpperCase()} ${c.minW / 1000}-${c.maxW / 1000} kW${c.refusesProfiles ? ', refuses profiles' : ''})`).join(', ')}; simulators at time factor ${TIME_FACTOR}, a meter sample every 10 simulated s (${10_000 / TIME_FACTOR} ms), all through a WireTap in the bench process.`,
          `${site.sessions.length} paid sessions charging; ${changes} limit changes alternating an operator PUT of ${LOWER_KW} kW and its DELETE (${CONTRACT_KW} kW); after each, the site settles (every lower landed and reported, ${QUIET_MS} ms without a profile call). Reallocation = from the PUT/DELETE being sent to the last SetChargingProfile sent after it being accepted, at the tap: ${perRound} samples a round, ${ROUNDS} rounds alternating with the bare reference; each percentile is taken within a round, the figure is the median of the rounds.`,
          `Site trace (${summary.points} points, one per meter value or profile answer on the wire): measured = sum of each connector's latest reported Power.Active.Import; ${summary.lines.join('; ')}.`,
          `Bare: ocpp-rpc RPCServer and one idle 1.6 simulator through the same tap (the site run's simulators share this process with 11 others and their meter values, so the per-call ratio is partly this process's load), ${barePerRound} TxDefaultProfile calls one after another each round, while the site's sessions charge.`,
          `Money: ${site.sessions.length} sessions stopped at the charger, each billed exactly the simulator's metered energy, ledger invariants checked.`,
        ],
      };
    } finally {
      await site.close();
    }
  },
};

function summarize(points: TracePoint[]) {
  let maxOverW = 0;
  let overMs = 0;
  let maxSettledOverBoundW = 0;
  let maxAllowedOverW = 0;
  for (const [i, p] of points.entries()) {
    maxOverW = Math.max(maxOverW, p.measuredW - p.limitW);
    maxSettledOverBoundW = Math.max(maxSettledOverBoundW, p.settledW - p.boundW);
    maxAllowedOverW = Math.max(maxAllowedOverW, p.allowedW - p.limitW);
    const next = points[i + 1];
    if (next && p.measuredW > p.limitW) overMs += next.atMs - p.atMs;
  }
  // About ten rows of the trace, evenly spaced.
  const start = points[0]?.atMs ?? 0;
  const step = Math.max(1, Math.floor(points.length / 10));
  const lines = points
    .filter((_, i) => i % step === 0)
    .map(
      (p) =>
        `${((p.atMs - start) / 1000).toFixed(1)} s: limit ${p.limitW / 1000}, measured ${(p.measuredW / 1000).toFixed(1)}, allowed ${(p.allowedW / 1000).toFixed(1)} kW`,
    );
  return { points: points.length, maxOverW, overMs, maxSettledOverBoundW, maxAllowedOverW, lines };
}
