import { clearUnrefTimer } from '../shared/unref-timer.js';

/** One-shot timers the limit board arms at its next edge; tests give their own, on a fake clock. */
export interface EdgeTimers {
  /** Runs `fire` after `delayMs`; the returned function cancels it. */
  set(delayMs: number, fire: () => void): () => void;
}

/**
 * A timer waits at most this long: the board re-reads the clock when it fires and arms again, so
 * a step of the wall clock (NTP, an operator setting the time) is caught within ten minutes, and
 * a week-long wait never overflows setTimeout.
 */
export const MAX_TIMER_MS = 600_000;

export const realTimers: EdgeTimers = {
  set(delayMs, fire) {
    const timer = setTimeout(fire, Math.min(Math.max(0, delayMs), MAX_TIMER_MS));
    timer.unref();
    return () => clearUnrefTimer(timer);
  },
};
