import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from './helpers/gateway.js';
import {
  inProcessGateway,
  LoadSite,
  SITE_CHARGERS,
  type SiteGateway,
  type SiteSession,
} from './helpers/load-site.js';

/**
 * Issue 17's "done when": a depot of 12 simulated connectors (OCPP 1.6J AC and 2.0.1 DC, one AC
 * charger refusing profiles) under a limit that changes while sessions start and stop: the
 * operator lowers it, sessions that cannot get their minimum wait, two drivers stop, the operator
 * clears it, the generator window of the schedule lowers it and its end raises it again. From the
 * meter values on the wire (test/helpers/site-trace.ts; the tolerance is in
 * docs/load-management.md, "Measured"): the site never exceeds the limit beyond the tolerance,
 * every session gets its paid energy within the overshoot goal unless its driver stopped it,
 * waiting is visible in the driver's session read, and every driver is billed exactly the energy
 * the meter delivered.
 */

const TIME_FACTOR = 40;
/** Two meter intervals (10 simulated seconds each) of quiet before a phase counts as settled. */
const QUIET_MS = (2 * 10_000) / TIME_FACTOR;
const CONTRACT_KW = 150;
const OPERATOR_KW = 70;
const GENERATOR_KW = 60;
/** docs/benchmarks.md: the paid-energy overshoot goal, 0.5 % of the paid energy. */
const OVERSHOOT_GOAL = 0.005;
/**
 * The gateway and the twelve simulators share this process, beside another test file on two
 * cores, and at TIME_FACTOR a millisecond of event-loop delay is 40 ms of charging: 0.56 Wh at
 * 50 kW. A stop is allowed the energy of this much delay on top of the goal: a stop here waits on
 * the loop twice (the gateway's stop going out, the simulator's meter halting on it), and CI
 * rehearsals saw 13 Wh at 50 kW (23 ms) and, on a loaded machine under Node 22, 42 Wh (75 ms). A
 * stop one meter interval off (250 ms, 139 Wh at 50 kW) still fails it. The goal itself is judged
 * in real processes by the bench's accuracy section (docs/benchmarks.md).
 */
const DELAY_ALLOWANCE_MS = 100;

/** Gateway time: the generator window starts the next whole UTC minute at least 2 min ahead. */
function generatorWindow(): { startMs: number; endMs: number; from: string; to: string } {
  const startMs = Math.ceil((Date.now() + 120_000) / 60_000) * 60_000;
  const endMs = startMs + 60_000;
  const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  return { startMs, endMs, from: hhmm(startMs), to: hhmm(endMs) };
}

describe('a 12-connector depot on both protocols under a changing site limit', () => {
  const generator = generatorWindow();
  let gw: SiteGateway & { t: TestGateway };
  let site: LoadSite;

  beforeAll(async () => {
    gw = await inProcessGateway(TIME_FACTOR, {
      site: { timeZone: 'UTC' },
      power: {
        limitKw: CONTRACT_KW,
        policy: 'equal',
        schedule: [
          {
            days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
            from: generator.from,
            to: generator.to,
            limitKw: GENERATOR_KW,
          },
        ],
      },
    });
    site = await LoadSite.start(gw, { limitW: CONTRACT_KW * 1000, timeFactor: TIME_FACTOR });
  });
  afterAll(async () => {
    await site?.close();
  });

  /**
   * Moves the gateway's clock to `ms` less `leadMs` and has the limit board look at it (an
   * operator clear without an override re-evaluates it): its own edge timer then fires `leadMs`
   * later, as on a site where the minutes pass.
   */
  async function clockTo(ms: number, leadMs: number): Promise<void> {
    gw.t.clock.advance(ms - leadMs - gw.t.clock.now());
    await site.operatorLimit(null, CONTRACT_KW * 1000);
  }

  /**
   * The sessions whose driver's read shows them waiting; each is held at 0 W on the wire. A read
   * while a profile is in flight is skipped (the read shows the allocation, the wire what the
   * charger accepted).
   */
  async function waitingVisible(): Promise<SiteSession[]> {
    const waiting: SiteSession[] = [];
    for (const s of site.sessions) {
      const allowance = () => site.trace.allowance(s.chargerId, String(s.connectorId));
      const before = allowance();
      const moved = site.trace.lastProfileActivityMs;
      const body = await site.read(s);
      const moving =
        site.trace.profilesInFlight() > 0 || site.trace.lastProfileActivityMs !== moved;
      if (body.state !== 'charging' || body.stopRequestedAt !== null || moving) continue;
      const power = body.power as { waiting: boolean; allocatedKw: number };
      if (power.waiting) {
        // Waiting, as the driver sees it, is being held at 0 W on the wire.
        waiting.push(s);
        expect(before, `${s.chargerId}/${s.connectorId} waits`).toBe(0);
        expect(power.allocatedKw).toBe(0);
      }
    }
    return waiting;
  }

  it('keeps the metered site power within the limit, pays out every session and bills only what was delivered', async () => {
    const start = (chargerId: string, connector: number) =>
      site.startSession(chargerId, connector, chargerId.includes('AC') ? 500 : 1_000);

    // 8 sessions under the contracted 150 kW: 4 AC (2 on the charger refusing profiles), 4 DC.
    for (const c of SITE_CHARGERS.slice(0, 4)) {
      await start(c.id, 1);
      await start(c.id, 2);
    }
    await site.settle(QUIET_MS);

    // The operator lowers the site to 70 kW; the 4 sessions starting after it cannot all get
    // their minimum (AC 4.1 kW, DC 5-10 kW, the refusing charger counted at its 11 kW).
    await site.operatorLimit(OPERATOR_KW * 1000, CONTRACT_KW * 1000);
    await site.settle(QUIET_MS);
    for (const c of SITE_CHARGERS.slice(4)) {
      await start(c.id, 1);
      await start(c.id, 2);
    }
    await site.settle(QUIET_MS);
    console.log(
      site.sessions.map((x) => [
        x.chargerId,
        x.connectorId,
        site.row(x.sessionId).state,
        site.trace.allowance(x.chargerId, String(x.connectorId)),
        site.trace.reportedPower(x.chargerId, String(x.connectorId)),
      ]),
      site.trace.points.at(-1),
      site.trace.violations,
    );
    expect((await waitingVisible()).length).toBeGreaterThan(0);

    // Two drivers stop at the charger; the operator clears the limit.
    const [first, , , , , , , , ninth] = site.sessions;
    if (!first || !ninth) throw new Error('sessions missing');
    await site.stopAtCharger(first);
    await site.stopAtCharger(ninth);
    await site.settle(QUIET_MS);
    await site.operatorLimit(null, CONTRACT_KW * 1000);
    await site.settle(QUIET_MS);

    // The generator window: the schedule lowers the site to 60 kW at its start...
    await clockTo(generator.startMs, 500);
    site.trace.setLimit(GENERATOR_KW * 1000);
    await site.settle(QUIET_MS);
    await waitingVisible();
    // ...and its end raises it back to the contract.
    await clockTo(generator.endMs, 500);
    site.trace.setLimit(CONTRACT_KW * 1000);
    await site.settle(QUIET_MS);

    await site.allEnded(60_000).finally(() =>
      console.log(
        JSON.stringify(site.trace.violations.slice(0, 10)),
        site.sessions.map((x) => [
          x.chargerId,
          x.connectorId,
          x.stopReason,
          (x.meterStop ?? 0) - (x.meterStart ?? 0),
          site.row(x.sessionId).limit_wh,
          site.row(x.sessionId).state,
        ]),
      ),
    );

    expect.soft(site.trace.violationSummary()).toEqual([]);
    expect.soft(site.trace.points.length).toBeGreaterThan(100);
    // Every session its driver did not stop got its paid energy: the gateway stopped it
    // (Remote) within the overshoot goal of the paid energy, either way, plus what
    // DELAY_ALLOWANCE_MS of this process's event-loop delay is worth at the charger's power.
    const payouts = site.sessions
      .filter((s) => s !== first && s !== ninth)
      .map((s) => {
        const paidWh = site.row(s.sessionId).limit_wh;
        const deliveredWh = (s.meterStop ?? 0) - (s.meterStart ?? 0);
        const maxW = SITE_CHARGERS.find((c) => c.id === s.chargerId)?.maxW ?? 0;
        const delayWh = (maxW * TIME_FACTOR * DELAY_ALLOWANCE_MS) / 3_600_000;
        const toleranceWh = paidWh * OVERSHOOT_GOAL + delayWh;
        return {
          at: `${s.chargerId}/${s.connectorId}`,
          reason: s.stopReason,
          paidWh,
          deliveredWh,
          toleranceWh,
        };
      });
    expect
      .soft(
        payouts.filter(
          (p) => p.reason !== 'Remote' || Math.abs(p.deliveredWh - p.paidWh) > p.toleranceWh,
        ),
      )
      .toEqual([]);
    expect.soft([first.stopReason, ninth.stopReason]).toEqual(['Local', 'Local']);
    expect.soft(site.billingProblems()).toEqual([]);
  }, 85_000);
});
