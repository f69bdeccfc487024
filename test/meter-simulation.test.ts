import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  awaitingFix,
  describeScenario,
  enabledValues,
  scenarioArb,
  type Scenario,
} from './meter-sim/classes.js';
import { FIXED_CASES } from './meter-sim/fixed-cases.js';
import { violations } from './meter-sim/invariants.js';
import { runScenario } from './meter-sim/run.js';

/**
 * Seeded meter behaviour against real sessions: each run is a paid session on a raw 1.6 or 2.0.1
 * charger whose firmware is one value per dimension of test/meter-sim/classes.ts, and the
 * invariants (test/meter-sim/invariants.ts) are judged from the simulated truth. A failure shrinks
 * to the fewest quirks that still break it. docs/development.md "Meter simulation" says how to
 * sweep and replay: METER_SIM_SEED, METER_SIM_RUNS, METER_SIM_PATH (fast-check's path of a shrunk
 * failure), METER_SIM_CLASSES, METER_SIM_SHRINKS, METER_SIM_VERBOSE (every run's figures),
 * METER_SIM_SCENARIO (one run as JSON, a Scenario), METER_SIM_FIXED=0 (leave the fixed cases out).
 */
const seed = Number(process.env.METER_SIM_SEED ?? 20_261_206);
const runs = Number(process.env.METER_SIM_RUNS ?? 4);
const path = process.env.METER_SIM_PATH;
const shrinks = Number(process.env.METER_SIM_SHRINKS ?? 40);
const FILE = 'test/meter-simulation.test.ts';

/** One run, judged: the broken invariants with their figures, or an error. */
async function judge(s: Scenario): Promise<string[]> {
  const started = performance.now();
  try {
    const r = await runScenario(s);
    const broken = Object.entries(violations(r)).map(([k, v]) => `${k}: ${v}`);
    if (process.env.METER_SIM_VERBOSE)
      console.log(
        `${describeScenario(s)}\n  ${((performance.now() - started) / 1000).toFixed(1)} s: paid ${r.paidWh} Wh, delivered ${Math.round(r.deliveredWh)}, ` +
          `billed ${r.billedWh} (${r.cost} NGN), stop at ${r.stoppedAtWh === null ? '-' : Math.round(r.stoppedAtWh)}, ` +
          `one sample ${Math.round(r.sampleWorthWh)}, unproven ${Math.round(r.unprovenWh)}; ${r.notes.join('; ')}`,
      );
    return broken.length === 0 ? [] : [...broken, `(${r.notes.join('; ')})`];
  } catch (err) {
    return [`error: ${(err as Error).message}`];
  }
}

const scenarioReplay = (s: Scenario) =>
  `METER_SIM_SCENARIO='${JSON.stringify(s)}' npx vitest run ${FILE}`;

describe.runIf(process.env.METER_SIM_FIXED !== '0' && !process.env.METER_SIM_SCENARIO)(
  'meter simulation: the field reports, each a fixed combination of classes',
  () => {
    for (const c of FIXED_CASES) {
      const waiting = awaitingFix(c.scenario).filter((v) => c.fixedBy.includes(v));
      const title = waiting.length > 0 ? `${c.name} (still broken: ${waiting.join(', ')})` : c.name;
      it(
        title,
        async () => {
          const broken = await judge(c.scenario);
          const replay = `\n    replay: ${scenarioReplay(c.scenario)}`;
          // Until its fix lands, the case must still break what it broke: the checker catches it.
          if (waiting.length > 0)
            for (const invariant of c.broke)
              expect(broken.join('\n') + replay, `expected to break "${invariant}"`).toContain(
                `${invariant}:`,
              );
          else expect(broken, broken.join('\n') + replay).toEqual([]);
        },
        60_000,
      );
    }
  },
);

it(
  `meter simulation: ${runs} runs from seed ${seed}`,
  async () => {
    const given = process.env.METER_SIM_SCENARIO;
    if (given) {
      const s = JSON.parse(given) as Scenario;
      const broken = await judge(s);
      expect(broken, `${describeScenario(s)}\n    ${broken.join('\n    ')}`).toEqual([]);
      return;
    }
    const started = performance.now();
    let ran = 0;
    let failedRuns = 0;
    let shrinkRuns = 0;
    let lastFailure: { s: Scenario; broken: string[] } | null = null;
    const property = fc.asyncProperty(scenarioArb(enabledValues()), async (s) => {
      // Past the shrink budget, a candidate counts as passing: the smallest failure found stands.
      if (failedRuns > 0 && shrinkRuns++ >= shrinks) return true;
      ran++;
      const broken = await judge(s);
      if (broken.length === 0) return true;
      failedRuns++;
      lastFailure = { s, broken };
      return false;
    });
    const details = await fc.check(property, {
      seed,
      numRuns: runs,
      ...(path !== undefined && { path }),
      endOnFailure: path !== undefined,
    });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `meter simulation: seed ${seed}, ${ran} runs in ${seconds} s` +
        (details.failed ? `, failed (shrunk ${details.numShrinks} times)` : ''),
    );
    if (!details.failed) return;
    const { s, broken } = lastFailure as unknown as { s: Scenario; broken: string[] };
    expect.fail(
      `smallest failing run: ${describeScenario(s)}\n    ${broken.join('\n    ')}\n` +
        `    replay: METER_SIM_SEED=${seed} METER_SIM_RUNS=${runs} METER_SIM_PATH="${details.counterexamplePath}" ` +
        `METER_SIM_FIXED=0${process.env.METER_SIM_CLASSES ? ` METER_SIM_CLASSES=${process.env.METER_SIM_CLASSES}` : ''} npx vitest run ${FILE}\n` +
        `    or: ${scenarioReplay(s)}`,
    );
  },
  Math.max(180_000, (runs + shrinks) * 30_000),
);
