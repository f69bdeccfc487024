import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { LimitWatch } from '../src/charging/limit-watch.js';
import { clearUnrefTimer } from '../src/shared/unref-timer.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Live heap kept by `work`, after a full GC on both sides (MB). */
function heapKeptBy(work: () => void): number {
  gc();
  const before = process.memoryUsage().heapUsed;
  work();
  gc();
  return (process.memoryUsage().heapUsed - before) / 2 ** 20;
}

// Node leaves an empty timer list per distinct duration behind a cleared unref()'d timer until
// that duration has passed: about 110 bytes each (5 MB for the 50,000 below, 3 MB for the watch's
// 30,000 plans). Cleared with clearUnrefTimer, nothing stays.
describe('clearing unref()’d timers keeps nothing behind', () => {
  it('the paid-energy watch re-planning on every sample of a session (real timers)', () => {
    const watch = new LimitWatch({ leadMs: 100, onLimit: () => undefined });
    const kept = heapKeptBy(() => {
      watch.begin('s', 4e7, 0, 0);
      // A rate that moves a little with each sample: a new wait (under setTimeout's longest), in
      // ms, at every plan.
      for (let i = 1; i <= 30_000; i++) watch.sample('s', i * 1_000 + (i % 7), i * 10_000);
    });
    watch.endAll();
    expect(kept).toBeLessThan(1);
  });

  it('50,000 timers of distinct durations, each cleared', () => {
    const kept = heapKeptBy(() => {
      for (let i = 0; i < 50_000; i++) {
        const timer = setTimeout(() => undefined, 600_000 + i);
        timer.unref();
        clearUnrefTimer(timer);
      }
    });
    expect(kept).toBeLessThan(1);
  });

  it('a cleared timer that had fired, or was cleared already, leaves the ref count alone', async () => {
    const fired = setTimeout(() => undefined, 1);
    fired.unref();
    await new Promise((resolve) => setTimeout(resolve, 20));
    clearUnrefTimer(fired);
    clearUnrefTimer(fired);
    expect(fired.hasRef()).toBe(true);
    // Had the count gone up, this worker could not exit; the suite ending is the proof. What can
    // be seen here: a live timer cleared twice is gone, and nothing fires.
    let ran = false;
    const live = setTimeout(() => (ran = true), 5);
    live.unref();
    clearUnrefTimer(live);
    clearUnrefTimer(live);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ran).toBe(false);
  });
});
