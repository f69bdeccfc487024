import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LimitWatch } from '../src/charging/limit-watch.js';
import { ReportingWatch } from './helpers/reporting-watch.js';

describe('paid-energy limit watch', () => {
  let fired: string[];
  let watch: LimitWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    fired = [];
    watch = new ReportingWatch({ leadMs: 100, onLimit: (id) => fired.push(id) });
  });
  afterEach(() => {
    watch.endAll();
    vi.useRealTimers();
  });

  it('stops at once when the limit is already reached', () => {
    watch.begin('s', 1000, 0, 0);
    watch.sample('s', 1000, 500);
    expect(fired).toEqual(['s']);
  });

  it('predicts the moment from the measured rate and fires lead ms before it', () => {
    watch.begin('s', 3000, 0, 0);
    watch.sample('s', 1000, 10_000); // 0.1 Wh/ms: 2000 Wh to go = 20,000 ms
    vi.advanceTimersByTime(19_899);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['s']);
  });

  it('re-plans on every sample as the rate changes (taper)', () => {
    watch.begin('s', 3000, 0, 0);
    watch.sample('s', 1000, 10_000); // 0.1 Wh/ms: due 19,900 ms from now
    vi.advanceTimersByTime(10_000);
    // slower: over the window (0 ms, 0 Wh) .. (20,000 ms, 1500 Wh) = 0.075 Wh/ms; 1500 Wh to go
    watch.sample('s', 1500, 20_000);
    vi.advanceTimersByTime(9_950); // past the first plan
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(20_000 - 100 - 9_950 - 1);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['s']);
  });

  it('one late sample cannot make the rate look several times higher', () => {
    watch.begin('s', 10_000, 0, 0);
    watch.sample('s', 1000, 10_000);
    watch.sample('s', 2000, 20_000);
    // the next sample was taken at 30,000 but arrives at 39,000, the one after it on time at 40,000
    watch.sample('s', 3000, 39_000);
    watch.sample('s', 4000, 40_000);
    // the last interval alone says 1 Wh/ms (stop in 6 s); over the window it is 0.1 Wh/ms (60 s)
    vi.advanceTimersByTime(20_000);
    expect(fired).toEqual([]);
  });

  it('a pause is not a rate: flat samples re-plan, a flat window plans no stop until flow resumes', () => {
    watch.begin('s', 3000, 0, 0);
    watch.sample('s', 1000, 10_000); // 0.1 Wh/ms: due at 30,000 less the lead
    watch.sample('s', 1000, 20_000); // flat: over the window 0.05 Wh/ms, due at 60,000
    vi.advanceTimersByTime(15_000); // past the first plan
    expect(fired).toEqual([]);
    watch.sample('s', 1000, 40_000); // a window with no flow: nothing planned
    vi.advanceTimersByTime(200_000);
    expect(fired).toEqual([]);
    watch.sample('s', 2000, 250_000); // flowing again: over the window 1000 Wh in 230 s
    vi.advanceTimersByTime(230_000 - 100 - 1);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['s']);
  });

  it('a suspended EV holds the plan; charging again, or energy flowing whatever it says, plans it again', () => {
    watch.begin('s', 3000, 0, 0);
    watch.sample('s', 1000, 10_000); // due 19,900 ms from now
    watch.hold('s');
    vi.advanceTimersByTime(60_000);
    expect(fired).toEqual([]);
    watch.resume('s');
    vi.advanceTimersByTime(19_899);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['s']);
    // Held, but the register rises: the plan is back on the sample's rate.
    fired = [];
    watch.begin('t', 3000, 0, 0);
    watch.sample('t', 1000, 10_000);
    watch.hold('t');
    watch.sample('t', 2000, 20_000);
    vi.advanceTimersByTime(10_000);
    expect(fired).toEqual(['t']);
  });

  it('a stop due while the charger is offline waits for it; back, it is planned again no sooner than its replay can arrive', () => {
    watch.begin('s', 3000, 0, 0);
    watch.sample('s', 1000, 10_000); // due 19,900 ms from now
    vi.advanceTimersByTime(19_900);
    expect(fired).toEqual(['s']);
    // The charger was offline: the lifecycle re-arms the watch instead of stopping.
    watch.rearm('s');
    vi.advanceTimersByTime(60_000);
    expect(fired).toEqual(['s']);
    // Back 80 s after the last reading: long overdue at the old rate, planned 2 s out for the
    // replay, which tapered (500 Wh in 70 s on the charger's clock): planned again from it.
    watch.reconnected('s', 90_000);
    watch.sample('s', 1500, 90_010, { stampMs: 80_000, ageMs: 10_000 }, false);
    vi.advanceTimersByTime(1_999);
    expect(fired).toEqual(['s']);
    // At the paid energy already when it comes back: stopped at once.
    watch.begin('t', 3000, 0, 0);
    watch.sample('t', 3000, 10_000);
    expect(fired).toEqual(['s', 't']);
    watch.rearm('t');
    watch.reconnected('t', 20_000);
    expect(fired).toEqual(['s', 't', 't']);
  });

  it('ignores samples that arrive out of order', () => {
    watch.begin('s', 3000, 0, 0);
    watch.sample('s', 1000, 10_000);
    watch.sample('s', 900, 11_000);
    watch.sample('s', 1200, 9_000);
    vi.advanceTimersByTime(19_899);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['s']);
  });

  it('waits while no energy flows (suspended), fires once, and forgets ended sessions', () => {
    watch.begin('s', 3000, 0, 0);
    watch.sample('s', 0, 10_000);
    vi.advanceTimersByTime(1_000_000);
    expect(fired).toEqual([]);
    watch.sample('s', 2999, 11_000);
    watch.sample('s', 5000, 11_500);
    watch.sample('s', 6000, 12_000);
    vi.advanceTimersByTime(10_000);
    expect(fired).toEqual(['s']);
    watch.end('s');
    watch.sample('s', 9000, 13_000);
    expect(fired).toEqual(['s']);
  });

  it('a burst stamped over a minute and received within milliseconds is a rate over that minute', () => {
    // Start at charger time 0; four samples stamped 15 s apart (10 Wh/s) arrive 1 ms apart.
    watch.begin('s', 10_000, 0, 60_000, 0);
    for (let k = 1; k <= 4; k++)
      watch.sample('s', 150 * k, 60_000 + k, { stampMs: 15_000 * k, ageMs: 0 });
    // 9,400 Wh to go at 10 Wh/s: 940 s. On the receive clock it would be 150 Wh/ms: 63 ms.
    vi.advanceTimersByTime(900_000);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(40_000);
    expect(fired).toEqual(['s']);
  });

  it('plans from when the charger took the sample: an old one brings the stop forward', () => {
    watch.begin('s', 3000, 0, 0, 0);
    // 0.1 Wh/ms on the charger's clock, 2,000 Wh to go (20 s), the sample taken 5 s ago.
    watch.sample('s', 1000, 10_000, { stampMs: 10_000, ageMs: 5_000 });
    vi.advanceTimersByTime(14_899);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['s']);
  });

  it('a charger clock that stands still leaves the rate to the receive clock', () => {
    watch.begin('s', 3000, 0, 0, 5_000);
    watch.sample('s', 1000, 10_000, { stampMs: 5_000, ageMs: 0 });
    vi.advanceTimersByTime(19_900);
    expect(fired).toEqual(['s']);
  });

  it('a queued sample the charger clock cannot place is history: it stops only at the limit', () => {
    watch.begin('s', 3000, 0, 0, 50_000);
    watch.sample('s', 1000, 1, { stampMs: 40_000, ageMs: 0 }, false);
    vi.advanceTimersByTime(1_000_000);
    expect(fired).toEqual([]);
    watch.sample('s', 3000, 2, { stampMs: 40_001, ageMs: 0 }, false);
    expect(fired).toEqual(['s']);
  });

  it('across a clock step the rate runs on when each reading was taken, not on a replay burst’s arrivals', () => {
    watch.begin('s', 6_000, 0, 0, 1_000_000);
    // 6 Wh/ms; offline from 125 ms, two queued readings replayed 1 ms apart at 500 ms.
    watch.sample('s', 750, 125, { stampMs: 1_000_125, ageMs: 0, epoch: 0 });
    watch.sample('s', 1_500, 500, { stampMs: 1_000_250, ageMs: 250, epoch: 0 }, false);
    watch.sample('s', 2_250, 501, { stampMs: 1_000_375, ageMs: 126, epoch: 0 }, false);
    // Then a live reading on a clock stepped an hour back (a new epoch): 750 Wh in 2 ms on
    // arrival times would stop it at once; taken 252 ms after the first of its window, 3,000 Wh
    // to go is about 500 ms.
    watch.sample('s', 3_000, 502, { stampMs: 1_000_500 - 3_600_000, ageMs: 0, epoch: 502 });
    vi.advanceTimersByTime(350);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual(['s']);
  });

  it('after a restart (no stamp yet), queued-looking readings on a moving charger clock still plan the stop', () => {
    watch.begin('s', 3000, 0, 0);
    // A 1.6 charger hours behind: every reading looks queued, but its clock moves.
    watch.sample('s', 1000, 10_000, { stampMs: 5_000_000, ageMs: 0 }, false);
    watch.sample('s', 2000, 20_000, { stampMs: 5_010_000, ageMs: 0 }, false);
    // 0.1 Wh/ms on its clock: 1,000 Wh to go, due in 10 s.
    vi.advanceTimersByTime(9_899);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['s']);
  });
});

describe('paid-energy limit watch, a wait longer than setTimeout can hold', () => {
  it('a trickle far from its limit is not stopped (Node fires a longer timer after 1 ms)', async () => {
    const fired: string[] = [];
    const watch = new ReportingWatch({ leadMs: 100, onLimit: (id) => fired.push(id) });
    // 50 kWh paid and left, drawing 50 W (an EV holding its battery full): due in 1,000 h.
    watch.begin('s', 50_000, 0, 0);
    watch.sample('s', 0.5, 36_000);
    watch.sample('s', 1, 72_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    watch.endAll();
    expect(fired).toEqual([]);
  });

  it('waits the longest setTimeout allows, plans again, and fires when due (fake timers)', () => {
    vi.useFakeTimers();
    try {
      const fired: string[] = [];
      const watch = new ReportingWatch({ leadMs: 100, onLimit: (id) => fired.push(id) });
      // 1 Wh/h: 50,000 Wh to go is 50,000 h = 1.8e11 ms.
      watch.begin('s', 50_001, 0, 0);
      watch.sample('s', 1, 3_600_000);
      const dueMs = 50_000 * 3_600_000 - 100;
      vi.advanceTimersByTime(2 ** 31);
      expect(fired).toEqual([]);
      vi.advanceTimersByTime(dueMs - 2 ** 31 - 1);
      expect(fired).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(fired).toEqual(['s']);
      watch.endAll();
    } finally {
      vi.useRealTimers();
    }
  });
});
