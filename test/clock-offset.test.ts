import { describe, expect, it } from 'vitest';
import { ChargerClocks, STEP_MS } from '../src/charging/clock-offset.js';

const T0 = Date.parse('2026-11-24T06:00:00Z');
const stamp = (ms: number) => new Date(ms).toISOString();

describe('a charger clock seen from ours', () => {
  it('a live reading after our clock stepped forward is not aged by the step', () => {
    const clocks = new ChargerClocks();
    for (let k = 0; k < 5; k++) clocks.observe('cp', stamp(T0 + k * 10_000), T0 + k * 10_000, true);
    // Our clock jumps 2 minutes; the charger's does not.
    const step = 120_000;
    const t = clocks.observe('cp', stamp(T0 + 50_000), T0 + 50_000 + step, true);
    expect(t.ageMs).toBe(0);
    const next = clocks.observe('cp', stamp(T0 + 60_000), T0 + 60_000 + step, true);
    expect(next.ageMs).toBe(0);
  });

  it('after a reconnect, queued readings late by the same amount twice in a row are a step; a burst is not', () => {
    const clocks = new ChargerClocks();
    for (let k = 0; k < 5; k++) clocks.observe('cp', stamp(T0 + k * 10_000), T0 + k * 10_000, true);
    clocks.connected('cp');
    // A burst queued while offline: stamped 10 s apart, received 1 ms apart, lateness falling.
    const burst = [0, 1, 2].map((k) =>
      clocks.observe('cp', stamp(T0 + 50_000 + k * 10_000), T0 + 200_000 + k),
    );
    expect(burst.map((b) => b.ageMs)).toEqual([150_000, 140_001, 130_002]);
    // A 1.6 charger whose readings our clock calls queued after it stepped 3 minutes.
    const other = new ChargerClocks();
    for (let k = 0; k < 5; k++) other.observe('cp', stamp(T0 + k * 10_000), T0 + k * 10_000, true);
    other.connected('cp');
    const first = other.observe('cp', stamp(T0 + 50_000), T0 + 230_000);
    expect(first.ageMs).toBe(180_000);
    const second = other.observe('cp', stamp(T0 + 60_000), T0 + 240_000 + STEP_MS / 2);
    expect(second.ageMs).toBe(0);
    const third = other.observe('cp', stamp(T0 + 70_000), T0 + 250_000);
    expect(third.ageMs).toBe(0);
  });

  it('a reading late past the estimate from a charger that stayed connected is a step at once', () => {
    const clocks = new ChargerClocks();
    for (let k = 0; k < 5; k++) clocks.observe('cp', stamp(T0 + k * 10_000), T0 + k * 10_000, true);
    // 1.6: our clock stepped 3 minutes, so the adapter calls the reading queued (not live).
    expect(clocks.observe('cp', stamp(T0 + 50_000), T0 + 230_000).ageMs).toBe(0);
  });

  it('a slow live message costs one reading: the next normal one restores the estimate', () => {
    const clocks = new ChargerClocks();
    for (let k = 0; k < 5; k++) clocks.observe('cp', stamp(T0 + k * 10_000), T0 + k * 10_000, true);
    clocks.observe('cp', stamp(T0 + 50_000), T0 + 50_000 + 2 * STEP_MS, true);
    expect(clocks.offsetMs('cp')).toBe(2 * STEP_MS);
    clocks.observe('cp', stamp(T0 + 60_000), T0 + 60_000, true);
    expect(clocks.offsetMs('cp')).toBe(0);
  });
});
