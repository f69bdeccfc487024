/** Injectable time source: tests move time forward instead of sleeping. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

let spelledMs = Number.NaN;
let spelled = '';

/**
 * `new Date(ms).toISOString()`, remembering the last instant spelled: the meter samples of one
 * group commit are handled in the same millisecond, and each stamps its session and event with it.
 */
export function isoAt(ms: number): string {
  if (ms !== spelledMs) {
    spelled = new Date(ms).toISOString();
    spelledMs = ms;
  }
  return spelled;
}
