import { describe, expect, it } from 'vitest';
import {
  ChargerClocks,
  STEP_MS,
  type ClockStore,
} from '../src/ocpp/charger-state/charger-clocks.js';

const T0 = Date.parse('2026-11-24T06:00:00Z');
const stamp = (ms: number) => new Date(ms).toISOString();

/** Five on-time messages 10 s apart, the charger's clock `skewMs` behind ours. */
function settled(clocks: ChargerClocks, skewMs = 0) {
  for (let k = 0; k < 5; k++)
    clocks.observe('cp', stamp(T0 + k * 10_000), T0 + k * 10_000 + skewMs);
}

function memoryStore(): ClockStore & { rows: Map<string, number> } {
  const rows = new Map<string, number>();
  const epochs = new Map<string, number>();
  return {
    rows,
    load: () =>
      [...rows].map(([chargerId, offsetMs]) => ({
        chargerId,
        offsetMs,
        epoch: epochs.get(chargerId) ?? 0,
      })),
    save: (chargerId, offsetMs, epoch) => {
      rows.set(chargerId, offsetMs);
      epochs.set(chargerId, epoch);
    },
  };
}

describe('a charger clock seen from ours', () => {
  it('a live reading after our clock stepped forward is not aged by the step', () => {
    const clocks = new ChargerClocks();
    settled(clocks);
    // Our clock jumps 2 minutes; the charger's does not.
    const step = 120_000;
    const t = clocks.observe('cp', stamp(T0 + 50_000), T0 + 50_000 + step);
    expect(t).toMatchObject({ ageMs: 0, live: true });
    expect(clocks.observe('cp', stamp(T0 + 60_000), T0 + 60_000 + step).ageMs).toBe(0);
  });

  it('after a reconnect, a queued burst keeps its spacing and never moves the estimate', () => {
    const clocks = new ChargerClocks();
    settled(clocks);
    clocks.connected('cp');
    // Stamped 10 s apart, received 1 ms apart, lateness falling.
    const burst = [0, 1, 2].map((k) =>
      clocks.observe('cp', stamp(T0 + 50_000 + k * 10_000), T0 + 200_000 + k),
    );
    expect(burst.map((b) => b.ageMs)).toEqual([150_000, 140_001, 130_002]);
    expect(burst.every((b) => !b.live)).toBe(true);
    expect(clocks.offsetMs('cp')).toBe(0);
  });

  it('a replay of samples 1 s apart, late by nearly the same amount each, is still a replay (MicroOcpp after missed pongs)', () => {
    const clocks = new ChargerClocks();
    settled(clocks);
    clocks.connected('cp');
    // Twelve samples queued over 12 s of a dropped link, replayed one per reply, 2 ms apart.
    const replay = Array.from({ length: 12 }, (_, k) =>
      clocks.observe('cp', stamp(T0 + 50_000 + k * 1_000), T0 + 70_000 + k * 2),
    );
    expect(replay.map((r) => r.ageMs)).toEqual(
      Array.from({ length: 12 }, (_, k) => 20_000 - k * 1_000 + k * 2),
    );
    expect(replay.every((r) => !r.live)).toBe(true);
    // The first live sample after the replay is on time: the estimate never moved.
    expect(clocks.observe('cp', stamp(T0 + 70_010), T0 + 70_030)).toMatchObject({
      ageMs: 20,
      live: true,
    });
    expect(clocks.offsetMs('cp')).toBe(0);
  });

  it('after a reconnect, two late readings spaced like their stamps are a clock step; the burst before is not', () => {
    const clocks = new ChargerClocks();
    settled(clocks);
    clocks.connected('cp');
    // Our clock stepped 3 minutes while the link was down: every reading is 180 s late.
    const first = clocks.observe('cp', stamp(T0 + 50_000), T0 + 230_000);
    expect(first).toMatchObject({ ageMs: 180_000, live: false });
    const second = clocks.observe('cp', stamp(T0 + 60_000), T0 + 240_000 + STEP_MS / 10);
    expect(second).toMatchObject({ ageMs: STEP_MS / 10, live: true });
    expect(clocks.observe('cp', stamp(T0 + 70_000), T0 + 250_000).ageMs).toBe(0);
  });

  it('a late reading from a charger that stayed connected is a step at once; one stamped before what it sent is history', () => {
    const clocks = new ChargerClocks();
    settled(clocks);
    expect(clocks.observe('cp', stamp(T0 + 50_000), T0 + 230_000)).toMatchObject({
      ageMs: 0,
      live: true,
    });
    const other = new ChargerClocks();
    settled(other);
    const hours = 3 * 3_600_000;
    expect(other.observe('cp', stamp(T0 + 50_000 - hours), T0 + 50_000)).toMatchObject({
      ageMs: hours,
      live: false,
    });
    expect(other.offsetMs('cp')).toBe(0);
  });

  it('2.0.1 offline events are replays: they never move the estimate', () => {
    const clocks = new ChargerClocks();
    settled(clocks, 3_000);
    const queued = clocks.observe('cp', stamp(T0 + 40_000), T0 + 90_000, true);
    expect(queued).toMatchObject({ ageMs: 47_000, live: false });
    expect(clocks.offsetMs('cp')).toBe(3_000);
  });

  it('a gateway restarted while a charger queued judges the replay against the offset it had', () => {
    const store = memoryStore();
    const before = new ChargerClocks(store);
    settled(before, 7_000);
    expect(store.rows.get('cp')).toBe(7_000);
    // The new process: the charger replays 30 s of samples, 5 s apart, in a burst.
    const after = new ChargerClocks(store, T0 + 90_000);
    after.connected('cp');
    const replay = [0, 1, 2, 3, 4, 5].map((k) =>
      after.observe('cp', stamp(T0 + 60_000 + k * 5_000), T0 + 100_000 + k),
    );
    expect(replay.map((r) => r.ageMs)).toEqual([33_000, 28_001, 23_002, 18_003, 13_004, 8_005]);
    expect(after.offsetMs('cp')).toBe(7_000);
  });

  it('a reboot is a reconnect: the queue the charger replays after it keeps its spacing', () => {
    const clocks = new ChargerClocks();
    settled(clocks, 2_000);
    clocks.booted('cp');
    const replay = [0, 1, 2].map((k) =>
      clocks.observe('cp', stamp(T0 + 50_000 + k * 10_000), T0 + 120_000 + k, true),
    );
    expect(replay.map((r) => r.ageMs)).toEqual([68_000, 58_001, 48_002]);
    expect(clocks.observe('cp', stamp(T0 + 118_000), T0 + 120_010)).toMatchObject({
      ageMs: 10,
      live: true,
    });
  });

  it('a replay longer than any window of messages keeps its spacing: it cannot push the estimate out', () => {
    const store = memoryStore();
    settled(new ChargerClocks(store), 7_000);
    const after = new ChargerClocks(store, T0 + 100_000);
    after.connected('cp');
    // 40 samples queued 150 ms apart while the gateway was down, late by 6 s down to 150 ms: each
    // within the 5 s of an on-time message, replayed one per reply, a millisecond apart.
    const replay = Array.from({ length: 40 }, (_, k) =>
      after.observe('cp', stamp(T0 + 94_000 + k * 150), T0 + 100_000 + 7_000 + k),
    );
    expect(replay.at(-1)?.ageMs).toBe(100_000 + 39 - (94_000 + 39 * 150));
    expect(after.offsetMs('cp')).toBe(7_000);
  });

  it('a slow live message costs one reading: the next normal one restores the estimate', () => {
    const clocks = new ChargerClocks();
    settled(clocks);
    clocks.observe('cp', stamp(T0 + 50_000), T0 + 50_000 + 2 * STEP_MS);
    expect(clocks.offsetMs('cp')).toBe(2 * STEP_MS);
    clocks.observe('cp', stamp(T0 + 60_000), T0 + 60_000);
    expect(clocks.offsetMs('cp')).toBe(0);
  });

  it('a charger clock never set says nothing: the receive time stands in', () => {
    const clocks = new ChargerClocks();
    expect(clocks.observe('cp', '1970-01-01T00:00:10.000Z', T0)).toEqual({
      stampMs: T0,
      atMs: T0,
      ageMs: 0,
      live: true,
      epoch: null,
    });
  });

  it('late messages stamped milliseconds apart and arriving so are a replay, not a step', () => {
    const clocks = new ChargerClocks();
    settled(clocks);
    clocks.connected('cp');
    // Three hours old, stamped as a test or a charger writes a queue at once: 3 ms apart each way.
    const replay = [0, 3, 6].map((k) =>
      clocks.observe('cp', stamp(T0 + 50_000 - 10_800_000 + k), T0 + 50_000 + k),
    );
    expect(replay.every((r) => !r.live)).toBe(true);
    expect(clocks.offsetMs('cp')).toBe(0);
  });
});

describe('charger clock epochs: two stamps of one epoch are as far apart as they were measured', () => {
  it('a queue replayed after the charger clock stepped forward while offline is one epoch, later than the one before', () => {
    const clocks = new ChargerClocks();
    settled(clocks);
    const before = clocks.observe('cp', stamp(T0 + 50_000), T0 + 50_000).epoch;
    clocks.connected('cp');
    // Offline from T0 + 50 s; the clock stepped 10 minutes forward; six samples 60 s apart,
    // stamped on the new clock, replayed 1 ms apart at T0 + 420 s.
    const step = 600_000;
    const burst = Array.from({ length: 6 }, (_, k) =>
      clocks.observe('cp', stamp(T0 + 60_000 + k * 60_000 + step), T0 + 420_000 + k),
    );
    const epoch = burst[0]?.epoch;
    expect(burst.every((b) => b.epoch === epoch)).toBe(true);
    expect(epoch).not.toBe(before);
    // Placed at its arrival until the new offset is known; the estimate ends at the new clock's.
    expect(clocks.offsetMs('cp')).toBe(420_005 - (360_000 + step));
    // Live readings after it are of the same epoch: the first lowers the estimate once more (the
    // last queued sample was a minute old), the next is on time and settles the epoch.
    const live = [430_000, 440_000, 450_000].map((t) =>
      clocks.observe('cp', stamp(T0 + t + step), T0 + t + 6),
    );
    expect(live.map((l) => [l.epoch, l.ageMs, l.live])).toEqual([
      [epoch, 0, true],
      [epoch, 0, true],
      [epoch, 0, true],
    ]);
    // Settled: a further forward step opens an epoch of its own.
    expect(clocks.observe('cp', stamp(T0 + 460_000 + 2 * step), T0 + 460_006).epoch).not.toBe(
      epoch,
    );
  });

  it('a step forward on a live link opens an epoch; another after it settled opens the next', () => {
    const clocks = new ChargerClocks();
    settled(clocks);
    const e0 = clocks.observe('cp', stamp(T0 + 50_000), T0 + 50_000).epoch;
    const e1 = clocks.observe('cp', stamp(T0 + 60_000 + 600_000), T0 + 60_000).epoch;
    expect(e1).not.toBe(e0);
    // Before two readings settle it, an earlier one still is the rest of a replayed queue.
    const queued = clocks.observe('cp', stamp(T0 + 60_000 + 660_000), T0 + 60_001).epoch;
    expect(queued).toBe(e1);
    // Two live readings 10 s apart settle it: a further step is a new epoch.
    for (const t of [70_000, 80_000]) clocks.observe('cp', stamp(T0 + t + 660_000), T0 + t);
    const e2 = clocks.observe('cp', stamp(T0 + 90_000 + 1_200_000), T0 + 90_000).epoch;
    expect(e2).not.toBe(e1);
  });

  it('a step back shown by two live-spaced readings opens an epoch; a replay does not', () => {
    const clocks = new ChargerClocks();
    settled(clocks);
    const e0 = clocks.observe('cp', stamp(T0 + 50_000), T0 + 50_000).epoch;
    clocks.connected('cp');
    const replay = [0, 1].map(
      (k) => clocks.observe('cp', stamp(T0 + 20_000 + k * 10_000), T0 + 60_000 + k).epoch,
    );
    expect(replay).toEqual([e0, e0]);
    // The charger's clock stepped 3 minutes back: live readings 10 s apart, 180 s late.
    clocks.observe('cp', stamp(T0 + 70_000 - 180_000), T0 + 70_000);
    const after = clocks.observe('cp', stamp(T0 + 80_000 - 180_000), T0 + 80_000).epoch;
    expect(after).not.toBe(e0);
  });

  it('a charger sampling faster than once a second: a step back shows in two live-spaced readings; a burst of them does not', () => {
    const clocks = new ChargerClocks();
    settled(clocks);
    const e0 = clocks.observe('cp', stamp(T0 + 50_000), T0 + 50_000).epoch;
    // Every 209 ms; the clock steps 51 minutes back on a live link. The first late reading is
    // history (stamped before what it sent); the second, spaced like it, shows the step.
    const back = 3_078_595;
    const first = clocks.observe('cp', stamp(T0 + 50_209 - back), T0 + 50_209);
    expect(first.live).toBe(false);
    const second = clocks.observe('cp', stamp(T0 + 50_418 - back), T0 + 50_418);
    expect(second).toMatchObject({ live: true, ageMs: 0 });
    expect(second.epoch).not.toBe(e0);
    // After a reconnect, a queue of readings 209 ms apart replayed 2 ms apart stays a replay.
    const other = new ChargerClocks();
    settled(other);
    other.connected('cp');
    const replay = Array.from({ length: 5 }, (_, k) =>
      other.observe('cp', stamp(T0 + 40_000 + k * 209), T0 + 60_000 + k * 2),
    );
    expect(replay.every((r) => !r.live)).toBe(true);
    expect(other.offsetMs('cp')).toBe(0);
  });

  it('2.0.1: after its queue flagged offline, a late message not flagged is live (the clock stepped back while offline)', () => {
    const clocks = new ChargerClocks();
    settled(clocks);
    const e0 = clocks.observe('cp', stamp(T0 + 50_000), T0 + 50_000).epoch;
    clocks.connected('cp');
    // Queued from T0 + 60 s, replayed at T0 + 120 s; the clock stepped 20 minutes back at T0 + 90 s.
    const back = 1_200_000;
    for (const t of [60_000, 70_000, 80_000])
      expect(clocks.observe('cp', stamp(T0 + t), T0 + 120_000, true).live).toBe(false);
    for (const t of [90_000, 100_000, 110_000])
      clocks.observe('cp', stamp(T0 + t - back), T0 + 120_001, true);
    // A MeterValues (it has no offline field) may still be part of the queue; a TransactionEvent
    // that says it is not offline is live.
    expect(clocks.observe('cp', stamp(T0 + 115_000 - back), T0 + 120_003).live).toBe(false);
    const live = clocks.observe('cp', stamp(T0 + 120_000 - back), T0 + 120_005, false);
    expect(live).toMatchObject({ live: true, ageMs: 0 });
    expect(live.epoch).not.toBe(e0);
    // The same message with no flagged queue before it (1.6, MicroOcpp) waits for a second one.
    const unflagged = new ChargerClocks();
    settled(unflagged);
    unflagged.connected('cp');
    expect(unflagged.observe('cp', stamp(T0 + 120_000 - back), T0 + 120_005, false).live).toBe(
      false,
    );
  });

  it('the epoch outlives a gateway restart with the offset', () => {
    const store = memoryStore();
    const clocks = new ChargerClocks(store);
    settled(clocks);
    const e1 = clocks.observe('cp', stamp(T0 + 60_000 + 600_000), T0 + 60_000).epoch;
    const restarted = new ChargerClocks(store, T0 + 70_000);
    expect(restarted.observe('cp', stamp(T0 + 70_000 + 600_000), T0 + 70_000).epoch).toBe(e1);
  });
});
