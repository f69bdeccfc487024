import fc from 'fast-check';
import { expect, it } from 'vitest';
import { STEP } from './money-sim/steps.js';
import { World } from './money-sim/world.js';

/**
 * Property-based simulation of the money path (issue 4, part 6): seeded random interleavings of
 * API calls, charger messages, repeats, dropped links, offline replays, time jumps and gateway
 * restarts against the real gateway and store, every invariant checked after every step.
 * README "Property-based money simulation" says how to run more seeds and replay a failure.
 */
const runs = Number(process.env.SIM_RUNS ?? 12);
const seed = Number(process.env.SIM_SEED ?? 20_261_122);
const maxSteps = Number(process.env.SIM_STEPS ?? 60);
const path = process.env.SIM_PATH;

it(
  `money simulation: ${runs} runs of up to ${maxSteps} steps from seed ${seed}`,
  async () => {
    const stats = new Map<string, number>();
    const ms = new Map<string, number>();
    let lastTrace: string[] = [];
    const property = fc.asyncProperty(
      fc.commands([STEP], { maxCommands: maxSteps, size: 'max' }),
      async (cmds) => {
        const s0 = performance.now();
        const world = await World.create();
        ms.set('create', (ms.get('create') ?? 0) + performance.now() - s0);
        try {
          await fc.asyncModelRun(() => ({ model: world, real: world }), cmds);
        } catch (err) {
          lastTrace = world.trace;
          throw err;
        } finally {
          for (const [k, n] of world.stats) stats.set(k, (stats.get(k) ?? 0) + n);
          for (const [k, n] of world.ms) ms.set(k, (ms.get(k) ?? 0) + n);
          const c0 = performance.now();
          await world.close();
          ms.set('close', (ms.get('close') ?? 0) + performance.now() - c0);
        }
      },
    );
    const details = await fc.check(property, {
      seed,
      numRuns: runs,
      ...(path !== undefined && { path }),
    });
    console.log([...ms].map(([k, n]) => `${k} ${Math.round(n)}ms`).join(', '));
    const summary = [...stats].map(([k, n]) => `${k} ${n}`).join(', ');
    console.log(
      `money simulation: ${details.numRuns} runs from seed ${seed}; steps run: ${summary}`,
    );
    if (details.failed) {
      const replay =
        `SIM_SEED=${details.seed} SIM_PATH="${details.counterexamplePath ?? ''}" SIM_RUNS=1 ` +
        `SIM_STEPS=${maxSteps} npx vitest run test/money-simulation.test.ts`;
      const error = details.errorInstance as Error | undefined;
      throw new Error(
        `money simulation failed (seed ${details.seed}, path ${details.counterexamplePath}` +
          `, shrunk ${details.numShrinks} times)\n` +
          `${error?.message ?? 'no error (too many skips or interrupted)'}\n` +
          `steps of the smallest failing run:\n  ${lastTrace.join('\n  ')}\n` +
          `replay: ${replay}`,
      );
    }
    expect(details.numRuns).toBe(runs);
  },
  Math.max(30_000, runs * 15_000),
);
