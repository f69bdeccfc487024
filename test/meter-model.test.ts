import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  judgePower,
  judgeRegister,
  possibleWh,
  provenWh,
  type Conditions,
  type Judgement,
  type MeterState,
  type PowerTrail,
  type RegisterReading,
} from '../src/charging/meter-model.js';
import { maxGainWh, resolutionWh } from '../src/charging/meter-track.js';

/**
 * The meter model (src/charging/meter-model.ts) for random sessions: energy flows at changing
 * power, and the charger's meter lives its life (resets with and without a reboot, roll-over at
 * its maximum, one garbage reading now and then, samples of power alone, frames sent twice). The
 * model's judgements are applied as the lifecycle persists them; after every reading the bill
 * (proven) never exceeds what flowed, never goes backwards, the stop's energy (possible) never
 * goes backwards nor below the bill, and a frame sent twice changes nothing.
 */

/** A meter counting in Wh up to this register, then from 0 again. */
const METER_MAX = 10_000_000;
const MAX_POWER_W = 400_000;

type Step =
  | { kind: 'flow'; ms: number; powerW: number }
  | { kind: 'register' }
  | { kind: 'power' }
  | { kind: 'reset'; reboot: boolean }
  | { kind: 'garbage'; wh: number }
  | { kind: 'repeat' };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('flow' as const),
      ms: fc.integer({ min: 1, max: 60_000 }),
      powerW: fc.integer({ min: 0, max: MAX_POWER_W / 2 }),
    }),
  },
  { weight: 6, arbitrary: fc.constant({ kind: 'register' } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: 'power' } as const) },
  {
    weight: 1,
    arbitrary: fc.boolean().map((reboot) => ({ kind: 'reset', reboot }) as const),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 0, max: METER_MAX - 1 })
      .map((wh) => ({ kind: 'garbage', wh }) as const),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'repeat' } as const) },
);

interface Run {
  meter: MeterState;
  power: PowerTrail | null;
  afterReboot: boolean;
}

/** The lifecycle's persistence of a judgement (lifecycle.ts applyRegister), without the I/O. */
function applied(run: Run, j: Judgement, r: RegisterReading): Run {
  switch (j.kind) {
    case 'not_counted':
      return run;
    case 'start':
      return {
        ...run,
        power: null,
        meter: {
          ...run.meter,
          startWh: j.startWh,
          startSampled: true,
          gapWh: j.gapWh,
          track: {
            ...run.meter.track,
            segmentStartWh: j.startWh,
            lastWh: j.startWh,
            lastAtMs: r.time.measuredAtMs,
            lastStampMs: r.time.stampMs,
            lastEpoch: r.time.epoch,
          },
        },
      };
    case 'doubted':
      return j.possibleWh === null
        ? run
        : { ...run, meter: { ...run.meter, possibleWh: j.possibleWh } };
    case 'counted':
      return {
        power: null,
        afterReboot: false,
        meter: {
          ...run.meter,
          track: j.track,
          heldTimestamp: j.track.pendingResetWh === null ? null : r.timestamp,
          possibleWh: j.possibleWh,
          gapWh: j.gapWh,
        },
      };
  }
}

function conditions(run: Run): Conditions {
  return {
    maxPowerW: MAX_POWER_W,
    afterReboot: run.afterReboot,
    rateWhPerMs: null,
    power: run.power,
  };
}

function simulate(
  startWh: number | null,
  steps: Step[],
  check: (run: Run, flowedWh: number) => void,
) {
  let t = 1_000_000;
  let flowed = 0;
  let register = startWh ?? 5_000;
  let powerW = 0;
  let garbageSinceHonest = false;
  let last: RegisterReading | null = null;
  const track = {
    segmentStartWh: startWh ?? 0,
    carriedWh: 0,
    lastWh: startWh ?? 0,
    pendingResetWh: null,
    lastAtMs: startWh === null ? null : t,
    lastStampMs: startWh === null ? null : t,
    lastEpoch: 0,
  };
  let run: Run = {
    meter: {
      startWh,
      startUnrounded: null,
      startSampled: false,
      track,
      heldTimestamp: null,
      possibleWh: null,
      gapWh: 0,
    },
    power: null,
    afterReboot: false,
  };
  const reading = (wh: number): RegisterReading => {
    t += 1; // readings are at least a millisecond apart
    return {
      energyWh: wh,
      powerW,
      timestamp: new Date(t).toISOString(),
      receivedAtMs: t,
      time: { stampMs: t, measuredAtMs: t, epoch: 0 },
      live: true,
    };
  };
  const observe = (r: RegisterReading) => {
    const before = { proven: provenWh(run.meter), possible: possibleWh(run.meter) };
    run = applied(run, judgeRegister(run.meter, r, conditions(run)), r);
    last = r;
    const after = { proven: provenWh(run.meter), possible: possibleWh(run.meter) };
    expect(after.proven).toBeGreaterThanOrEqual(before.proven);
    expect(after.possible).toBeGreaterThanOrEqual(before.possible);
    check(run, flowed);
  };
  for (const s of steps) {
    if (s.kind === 'flow') {
      powerW = s.powerW;
      const wh = Math.floor((s.powerW * s.ms) / 3_600_000);
      t += s.ms;
      flowed += wh;
      register = (register + wh) % METER_MAX;
    } else if (s.kind === 'register') {
      garbageSinceHonest = false;
      observe(reading(register));
    } else if (s.kind === 'power') {
      t += 1;
      const before = possibleWh(run.meter);
      const judged = judgePower(run.meter, t, powerW, 1_000_000, conditions(run));
      if (judged) {
        run = {
          ...run,
          power: judged.trail,
          meter: { ...run.meter, possibleWh: judged.possibleWh },
        };
      }
      expect(possibleWh(run.meter)).toBeGreaterThanOrEqual(before);
      check(run, flowed);
    } else if (s.kind === 'reset') {
      register = 0;
      if (s.reboot) run = { ...run, afterReboot: true };
    } else if (s.kind === 'garbage') {
      // One garbage reading between honest ones: two ascending in a row below the start cannot be
      // told from a reset (the documented limit of the register's life, meter-readings.md).
      if (garbageSinceHonest || run.meter.startWh === null) continue;
      // A gain the connector's power could have made in the time (plus one step of the meter's
      // resolution), over the last register or a held reset, is indistinguishable from energy that
      // flowed: the plausibility bound is all a register can be judged by. Not garbage.
      const { lastWh, lastAtMs, pendingResetWh, segmentStartWh } = run.meter.track;
      const from = s.wh >= lastWh ? lastWh : pendingResetWh;
      const step = from === null ? 1 : resolutionWh(segmentStartWh, from, s.wh);
      if (
        from !== null &&
        s.wh >= from &&
        s.wh - from <= maxGainWh(MAX_POWER_W, lastAtMs, t + 1, step)
      )
        continue;
      garbageSinceHonest = true;
      observe(reading(s.wh));
    } else if (last) {
      // The same frame again (a retry after a lost reply): nothing changes.
      const before = run;
      const again: RegisterReading = last;
      run = applied(run, judgeRegister(run.meter, again, conditions(run)), again);
      expect(provenWh(run.meter)).toBe(provenWh(before.meter));
      expect(possibleWh(run.meter)).toBe(possibleWh(before.meter));
    }
  }
}

describe('the meter model', () => {
  it('never bills more than flowed, never moves the bill or the stop backwards, and a repeated frame changes nothing', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constant(null),
          fc.integer({ min: 0, max: 1_000_000 }),
          fc.integer({ min: METER_MAX - 50_000, max: METER_MAX - 1 }),
        ),
        fc.array(step, { maxLength: 60 }),
        (startWh, steps) => {
          simulate(startWh, steps, (run, flowed) => {
            expect(provenWh(run.meter)).toBeLessThanOrEqual(flowed);
            expect(possibleWh(run.meter)).toBeGreaterThanOrEqual(provenWh(run.meter));
          });
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('power alone makes possible what that power delivers in the time, and proves nothing', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_POWER_W / 2 }),
        fc.array(fc.integer({ min: 1, max: 60_000 }), { minLength: 1, maxLength: 20 }),
        (powerW, gaps) => {
          simulate(
            10_000,
            gaps.flatMap((ms) => [{ kind: 'flow', ms, powerW } as Step, { kind: 'power' } as Step]),
            (run, flowed) => {
              expect(provenWh(run.meter)).toBe(0);
              // Each power reading is a millisecond after the flow it follows: at most 1 Wh more
              // per reading at these powers, never less than flowed.
              expect(possibleWh(run.meter)).toBeGreaterThanOrEqual(flowed);
              expect(possibleWh(run.meter)).toBeLessThanOrEqual(flowed + 2 * gaps.length + 1);
            },
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a decimal kWh start counts from the highest Wh it can stand for', () => {
    const meter: MeterState = {
      startWh: 1235,
      startUnrounded: 1234.567,
      startSampled: false,
      track: {
        segmentStartWh: 1235,
        carriedWh: 0,
        lastWh: 1235,
        pendingResetWh: null,
        lastAtMs: 0,
        lastStampMs: 0,
        lastEpoch: 0,
      },
      heldTimestamp: null,
      possibleWh: null,
      gapWh: 0,
    };
    const r: RegisterReading = {
      energyWh: 1_234_817,
      powerW: null,
      timestamp: '1970-01-01T00:00:10.000Z',
      receivedAtMs: 10_000,
      time: { stampMs: 10_000, measuredAtMs: 10_000, epoch: 0 },
      live: true,
    };
    const c: Conditions = {
      maxPowerW: MAX_POWER_W,
      afterReboot: false,
      rateWhPerMs: null,
      power: null,
    };
    expect(judgeRegister(meter, r, c)).toMatchObject({
      kind: 'counted',
      rebasedStartWh: 1_234_567,
    });
    const rounded = { ...meter, startUnrounded: null };
    expect(judgeRegister(rounded, r, c)).toMatchObject({
      kind: 'counted',
      rebasedStartWh: 1_234_817,
    });
    const tenths = { ...meter, startUnrounded: 1234.5 };
    expect(judgeRegister(tenths, r, c)).toMatchObject({ rebasedStartWh: 1_234_599 });
  });
});
