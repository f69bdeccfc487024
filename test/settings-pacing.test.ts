import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SettingsPacing,
  type SettingsPacingOptions,
} from '../src/ocpp/charger-state/settings-pacing.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The rules of when a booted charger's settings are read (src/ocpp/charger-state/settings-pacing.ts), on the
 * class itself with a clock the test moves. The gateway-level storm is in charger-configure.test.ts.
 */

const tick = () => new Promise((r) => setImmediate(r));

function pacing(opts: Partial<SettingsPacingOptions> = {}) {
  let now = 0;
  const started: string[] = [];
  // Per charger, the reads running, oldest first: a charger booting again while its read runs has
  // two (one resolver per charger lost the first, which then never finished).
  const finish = new Map<string, (() => void)[]>();
  const p = new SettingsPacing({
    immediate: 2,
    quietMs: 50,
    maxWaitMs: 10_000,
    parallel: 3,
    now: () => now,
    ...opts,
  });
  const boot = (id: string) =>
    p.booted(
      id,
      () =>
        new Promise<void>((resolve) => {
          started.push(id);
          finish.set(id, [...(finish.get(id) ?? []), resolve]);
        }),
    );
  const done = async (id: string) => {
    const [oldest, ...rest] = finish.get(id) ?? [];
    oldest?.();
    if (rest.length > 0) finish.set(id, rest);
    else finish.delete(id);
    await tick();
    await tick();
  };
  return {
    p,
    started,
    boot,
    done,
    running: () => [...finish].flatMap(([id, reads]) => reads.map(() => id)),
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('settings reads after boots', () => {
  it('reads a charger or a few at once, and holds the rest of a burst until the boots are quiet', async () => {
    const t = pacing();
    t.boot('A');
    t.boot('B');
    expect(t.started).toEqual(['A', 'B']);
    t.boot('C');
    t.boot('D');
    expect(t.started).toEqual(['A', 'B']);
    // Boots keep coming, each within quietMs of the one before: nothing more is read.
    t.advance(40);
    t.boot('E');
    t.advance(40);
    expect(t.started).toEqual(['A', 'B']);
    t.advance(10); // 50 ms since E's boot: the timer the pacing set finds the site quiet
    await waitUntil(() => t.started.length === 3, 2000, 'first read after the quiet');
    // In boot order, `parallel` (3) at a time: A and B still run, so one more.
    expect(t.started).toEqual(['A', 'B', 'C']);
    await t.done('A');
    expect(t.started).toEqual(['A', 'B', 'C', 'D']);
    await t.done('B');
    await t.done('C');
    expect(t.started).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(t.p.pending).toBe(0);
    t.p.close();
  });

  it('a burst that never calms down still has its oldest read after maxWaitMs', async () => {
    const t = pacing({ maxWaitMs: 200 });
    for (const id of ['A', 'B', 'C']) t.boot(id);
    for (let ms = 0; ms < 180; ms += 20) {
      t.advance(20);
      t.boot(`X${ms}`);
    }
    expect(t.started).toEqual(['A', 'B']);
    t.advance(20); // C has waited 200 ms; boots still arrive every 20 ms
    t.boot('Y');
    expect(t.started).toEqual(['A', 'B', 'C']);
    t.p.close();
  });

  it('a charger asked to start is read at once, ahead of the queue and the parallel bound', () => {
    const t = pacing({ parallel: 2 });
    for (const id of ['A', 'B', 'C', 'D']) t.boot(id);
    expect(t.started).toEqual(['A', 'B']);
    t.p.promote('D');
    expect(t.started).toEqual(['A', 'B', 'D']);
    t.p.promote('D'); // read once, not twice
    t.p.promote('A'); // already read: nothing
    expect(t.started).toEqual(['A', 'B', 'D']);
    expect(t.p.pending).toBe(1);
    t.p.close();
  });

  it('a charger gone offline is not read; one booting again keeps its place', async () => {
    const t = pacing();
    for (const id of ['A', 'B', 'C', 'D', 'E']) t.boot(id);
    t.p.forget('D');
    t.boot('C'); // booted again while waiting: still before E
    t.advance(50);
    await waitUntil(() => t.started.length === 3, 2000, 'read after the quiet');
    await t.done('A');
    await t.done('B');
    expect(t.started).toEqual(['A', 'B', 'C', 'E']);
    t.p.close();
  });

  it('after close nothing is read, and no timer keeps the process alive', async () => {
    const t = pacing();
    for (const id of ['A', 'B', 'C']) t.boot(id);
    t.p.close();
    t.advance(100);
    t.boot('D');
    await new Promise((r) => setTimeout(r, 80));
    expect(t.started).toEqual(['A', 'B']);
  });

  it('every charger booted and still online is read after its last boot, and never more often than it booted', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            charger: fc.integer({ min: 0, max: 9 }),
            gapMs: fc.integer({ min: 0, max: 80 }),
            op: fc.constantFrom('boot', 'boot', 'boot', 'promote', 'forget', 'finish'),
          }),
          { maxLength: 40 },
        ),
        async (steps) => {
          const t = pacing({ parallel: 2, maxWaitMs: 300 });
          const online = new Map<string, number>(); // charger: reads started before its last boot
          const boots = new Map<string, number>();
          for (const { charger, gapMs, op } of steps) {
            const id = `C${charger}`;
            t.advance(gapMs);
            if (op === 'boot') {
              online.set(id, t.started.length);
              boots.set(id, (boots.get(id) ?? 0) + 1);
              t.boot(id);
            } else if (op === 'promote') t.p.promote(id);
            else if (op === 'forget') {
              t.p.forget(id);
              online.delete(id);
            } else {
              const first = t.running()[0];
              if (first) await t.done(first);
            }
          }
          t.advance(1_000);
          // Every read finishes as soon as it starts, until none waits (the pacing's timer runs
          // on real time: at most quietMs).
          for (let i = 0; i < 200 && (t.p.pending > 0 || t.running().length > 0); i++) {
            for (const id of t.running()) await t.done(id);
            await new Promise((r) => setTimeout(r, 2));
          }
          expect(t.p.pending).toBe(0);
          for (const [id, mark] of online)
            expect(t.started.lastIndexOf(id)).toBeGreaterThanOrEqual(mark);
          for (const [id, n] of boots) {
            expect(t.started.filter((s) => s === id).length).toBeLessThanOrEqual(n);
          }
          t.p.close();
        },
      ),
      { numRuns: 60 },
    );
  });
});
