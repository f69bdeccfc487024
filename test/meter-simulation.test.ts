import fc from 'fast-check';
import { expect, it } from 'vitest';
import {
  describeScenario,
  enabledFeatures,
  scenarioArb,
  type Scenario,
} from './meter-sim/features.js';
import { violations } from './meter-sim/invariants.js';
import { runScenario } from './meter-sim/run.js';

/**
 * Seeded meter behaviour against real sessions (issue 27, item 9): each run is a paid session on
 * a raw 1.6 or 2.0.1 charger whose EV, meter, clock and link the seed picks from the enabled
 * features (test/meter-sim/features.ts), and the invariants (test/meter-sim/invariants.ts) are
 * judged from the simulated truth. docs/development.md "Meter simulation" says how to sweep and
 * replay: METER_SIM_SEED, METER_SIM_RUNS, METER_SIM_FEATURES, METER_SIM_RUN (one run of the set),
 * METER_SIM_VERBOSE (every run's figures), METER_SIM_SCENARIO (one run as JSON, a Scenario).
 */
const seed = Number(process.env.METER_SIM_SEED ?? 20_261_127);
const runs = Number(process.env.METER_SIM_RUNS ?? 12);
const only = process.env.METER_SIM_RUN === undefined ? null : Number(process.env.METER_SIM_RUN);
const features = enabledFeatures();
const FILE = 'test/meter-simulation.test.ts';

it(
  `meter simulation: ${runs} runs from seed ${seed}, features ${features.join(',') || 'none'}`,
  async () => {
    const given = process.env.METER_SIM_SCENARIO;
    const scenarios = given
      ? [JSON.parse(given) as Scenario]
      : fc.sample(scenarioArb(features), { seed, numRuns: runs });
    const failures: string[] = [];
    const started = performance.now();
    for (const [i, s] of scenarios.entries()) {
      if (only !== null && i !== only) continue;
      // The seed's command replays the run while the generator stays as it is; the scenario always.
      const replay =
        (given
          ? ''
          : `METER_SIM_SEED=${seed} METER_SIM_RUNS=${runs} METER_SIM_RUN=${i} ` +
            `METER_SIM_FEATURES=${features.join(',') || 'none'} npx vitest run ${FILE}\n    or: `) +
        `METER_SIM_SCENARIO='${JSON.stringify(s)}' npx vitest run ${FILE}`;
      try {
        const r = await runScenario(s);
        const broken = Object.entries(violations(s, r));
        if (process.env.METER_SIM_VERBOSE)
          console.log(
            `run ${i}: ${describeScenario(s)}\n  paid ${r.paidWh} Wh, delivered ${Math.round(r.deliveredWh)}, ` +
              `billed ${r.billedWh} (${r.cost} NGN), stop at ${r.stoppedAtWh === null ? '-' : Math.round(r.stoppedAtWh)}, ` +
              `one sample ${Math.round(r.sampleWorthWh)}; ${r.notes.join('; ')}`,
          );
        if (broken.length > 0)
          failures.push(
            `run ${i}: ${describeScenario(s)}\n    ${broken.map(([k, v]) => `${k}: ${v}`).join('\n    ')}\n` +
              `    (${r.notes.join('; ')})\n    replay: ${replay}`,
          );
      } catch (err) {
        failures.push(
          `run ${i}: ${describeScenario(s)}\n    error: ${(err as Error).message}\n    replay: ${replay}`,
        );
      }
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `meter simulation: seed ${seed}, ${scenarios.length} runs in ${seconds} s, ${failures.length} failed`,
    );
    expect(failures, failures.join('\n')).toEqual([]);
  },
  Math.max(120_000, runs * 30_000),
);
