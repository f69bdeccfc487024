import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SessionTimers } from '../src/charging/session-timers.js';

/** The end timers every meter sample restarts (src/charging/session-timers.ts). */
describe('session end timers', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a restart with the armed delay starts the wait over; it still fires once, when due', () => {
    const timers = new SessionTimers();
    let fired = 0;
    timers.armEnd('silence', 's1', 1000, () => fired++);
    vi.advanceTimersByTime(800);
    expect(timers.restartEnd('silence', 's1', 1000)).toBe(true);
    vi.advanceTimersByTime(800);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(250);
    expect(fired).toBe(1);
    // Fired and gone: nothing to restart, the caller arms a new one.
    expect(timers.restartEnd('silence', 's1', 1000)).toBe(false);
    timers.close();
  });

  it('is not restarted with another delay, for another kind or session, or once cleared', () => {
    const timers = new SessionTimers();
    let fired = 0;
    // Armed at start-up with what was left of the wait, not the full delay.
    timers.armEnd('silence', 's1', 300, () => fired++);
    expect(timers.restartEnd('silence', 's1', 1000)).toBe(false);
    expect(timers.restartEnd('idle', 's1', 300)).toBe(false);
    expect(timers.restartEnd('silence', 's2', 300)).toBe(false);
    timers.clearEnds('s1');
    expect(timers.restartEnd('silence', 's1', 300)).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(fired).toBe(0);
    timers.close();
  });
});
