/**
 * A 1.6 sample, or a 2.0.1 MeterValues, has no "offline" flag: one stamped this much before it
 * arrived was queued while the charger was offline, and describes the past (it moves the register,
 * not the stop prediction's rate). A timestamp before TRUSTED_CLOCK_FROM is a charger that never
 * set its clock (1970 after a reboot): it says nothing about when the sample was taken, so it
 * counts as live.
 */
const QUEUED_AFTER_MS = 120_000;
const TRUSTED_CLOCK_FROM = Date.parse('2020-01-01T00:00:00Z');

export function queued(timestamp: string, receivedAtMs: number): boolean {
  const at = Date.parse(timestamp);
  return Number.isFinite(at) && at >= TRUSTED_CLOCK_FROM && receivedAtMs - at > QUEUED_AFTER_MS;
}
