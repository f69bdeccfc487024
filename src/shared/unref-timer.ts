/**
 * Clears a timer that was unref()'d. Node keeps one timer list per distinct duration, and when
 * the timer it clears is unref()'d it leaves that list, empty, until the duration has passed (it
 * expects HTTP to arm the same duration again: `unenroll` in Node's lib/internal/timers.js). A
 * timer armed again with a new duration on every meter sample, as the paid-energy watch's is,
 * then leaves about 110 bytes behind each time for as long as its wait was: 28 MB at 500
 * chargers after 30 s of saturation (docs/benchmarks.md). Ref'd for the moment it is cleared, its
 * empty list goes with it; the count of ref'd timers is left as it was.
 */
export function clearUnrefTimer(timer: NodeJS.Timeout | null | undefined): void {
  if (!timer) return;
  timer.ref();
  clearTimeout(timer);
}
