import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EdgeTimers } from '../src/load/edge-timer.js';
import { LimitBoard, type OperatorOverride } from '../src/load/limit-board.js';
import type { LimitReader, NodeLimit } from '../src/load/limits.js';
import { PowerSchedule, type ScheduleWindowSpec } from '../src/load/schedule.js';
import { instantOf, localTime } from '../src/load/local-time.js';

/** A clock and one-shot timers that only move when the test says so; timers fire in due order. */
class FakeTime implements EdgeTimers {
  private t: number;
  private seq = 0;
  private readonly due = new Map<number, { at: number; fire: () => void }>();
  /** When each fired timer was due, in order. */
  readonly fired: number[] = [];

  constructor(start: number) {
    this.t = start;
  }
  now(): number {
    return this.t;
  }
  set(delayMs: number, fire: () => void): () => void {
    const id = this.seq++;
    this.due.set(id, { at: this.t + Math.max(0, delayMs), fire });
    return () => this.due.delete(id);
  }
  /** The earliest armed timer's moment. */
  next(): number | undefined {
    let at: number | undefined;
    for (const d of this.due.values()) if (at === undefined || d.at < at) at = d.at;
    return at;
  }
  advanceTo(target: number): void {
    for (;;) {
      let first: [number, { at: number; fire: () => void }] | undefined;
      for (const entry of this.due) if (!first || entry[1].at < first[1].at) first = entry;
      if (!first || first[1].at > target) break;
      this.due.delete(first[0]);
      this.t = Math.max(this.t, first[1].at);
      this.fired.push(first[1].at);
      first[1].fire();
    }
    this.t = Math.max(this.t, target);
  }
}

/** The contracted limits, as the config gives them. */
function contract(watts: Record<string, number>): LimitReader {
  return {
    limit: (nodeId: string): NodeLimit => {
      const w = watts[nodeId];
      if (w === undefined) throw new Error(`unknown node ${nodeId}`);
      return { nodeId, watts: w, source: 'config' };
    },
    onChange: () => () => undefined,
  };
}

const LAGOS = 'Africa/Lagos';
// Monday 23 November 2026, 00:00 in Lagos (UTC+1, no DST)
const MONDAY = Date.parse('2026-11-22T23:00:00.000Z');
const HOUR = 3_600_000;

function board(
  time: FakeTime,
  o: {
    schedule?: ScheduleWindowSpec[];
    timeZone?: string;
    feed?: { fallbackWatts?: number };
    nodes?: Record<string, number>;
  } = {},
) {
  const nodes = o.nodes ?? { site: 100_000, c1: 40_000 };
  return new LimitBoard({
    base: contract(nodes),
    nodeIds: Object.keys(nodes),
    siteNodeId: 'site',
    clock: time,
    timers: time,
    schedule: new PowerSchedule(o.schedule ?? [], o.timeZone ?? LAGOS, 'site'),
    feed: o.feed,
  });
}

describe('schedule windows in the site time zone', () => {
  it('a window over midnight starts and ends exactly at its local edges, by one timer each', () => {
    const time = new FakeTime(MONDAY + 12 * HOUR);
    const b = board(time, {
      schedule: [{ days: ['mon'], from: '18:00', to: '06:00', limitKw: 30 }],
    });
    let changes = 0;
    b.onChange(() => changes++);
    expect(b.limit('site')).toEqual({ nodeId: 'site', watts: 100_000, source: 'config' });
    // Monday 18:00 in Lagos is 17:00 UTC
    expect(time.next()).toBe(Date.parse('2026-11-23T17:00:00.000Z'));
    time.advanceTo(Date.parse('2026-11-23T16:59:59.999Z'));
    expect(b.limit('site').source).toBe('config');
    time.advanceTo(Date.parse('2026-11-23T17:00:00.000Z'));
    expect(b.limit('site')).toEqual({ nodeId: 'site', watts: 30_000, source: 'schedule' });
    expect(changes).toBe(1);
    // past midnight into Tuesday, still in force; it ends Tuesday 06:00 local
    expect(time.next()).toBe(Date.parse('2026-11-24T05:00:00.000Z'));
    time.advanceTo(Date.parse('2026-11-24T04:59:59.999Z'));
    expect(b.limit('site').source).toBe('schedule');
    time.advanceTo(Date.parse('2026-11-24T05:00:00.000Z'));
    expect(b.limit('site').source).toBe('config');
    expect(changes).toBe(2);
    // Tuesday evening: the window starts only on Mondays
    time.advanceTo(Date.parse('2026-11-24T20:00:00.000Z'));
    expect(b.limit('site').source).toBe('config');
    expect(time.fired).toEqual([
      Date.parse('2026-11-23T17:00:00.000Z'),
      Date.parse('2026-11-24T05:00:00.000Z'),
    ]);
  });

  it('Sunday night runs into Monday across the week boundary, in a zone offset by half hours', () => {
    const zone = 'Asia/Kolkata'; // UTC+5:30, no DST
    const s = new PowerSchedule(
      [{ days: ['sun'], from: '22:30', to: '01:15', limitKw: 12.5 }],
      zone,
      'site',
    );
    // Sunday 29 November 2026 22:30 IST = 17:00 UTC; Monday 01:15 IST = 19:45 UTC Sunday
    const start = Date.parse('2026-11-29T17:00:00.000Z');
    const end = Date.parse('2026-11-29T19:45:00.000Z');
    expect(s.nextEdge(start - 1)).toBe(start);
    expect(s.inForce(start - 1).get('site')).toBeUndefined();
    expect(s.inForce(start).get('site')).toBe(12_500);
    expect(s.nextEdge(start)).toBe(end);
    expect(s.inForce(end - 1).get('site')).toBe(12_500);
    expect(s.inForce(end).get('site')).toBeUndefined();
    // the next start is a week later
    expect(s.nextEdge(end)).toBe(start + 7 * 24 * HOUR);
  });

  it('equal from and to is a whole day; overlapping windows give the lowest; circuits have their own', () => {
    const time = new FakeTime(MONDAY + 10 * HOUR);
    const b = board(time, {
      schedule: [
        { days: ['mon'], from: '00:00', to: '00:00', limitKw: 80 },
        { days: ['mon'], from: '09:00', to: '11:00', limitKw: 50 },
        { node: 'c1', days: ['mon', 'tue'], from: '08:00', to: '20:00', limitKw: 10 },
      ],
    });
    expect(b.limit('site')).toEqual({ nodeId: 'site', watts: 50_000, source: 'schedule' });
    expect(b.limit('c1')).toEqual({ nodeId: 'c1', watts: 10_000, source: 'schedule' });
    time.advanceTo(MONDAY + 11 * HOUR);
    expect(b.limit('site').watts).toBe(80_000);
    time.advanceTo(MONDAY + 24 * HOUR);
    expect(b.limit('site').source).toBe('config');
  });

  it('the local clock and its inverse agree for every minute of a DST-free week', () => {
    for (const zone of [LAGOS, 'Asia/Kolkata', 'UTC', 'America/Bogota']) {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 7 * 1440 - 1 }), (minutes) => {
          const ms = MONDAY + minutes * 60_000;
          const local = localTime(ms, zone);
          expect(instantOf(local.day, local.minute, zone)).toBe(ms);
        }),
        { numRuns: 200 },
      );
    }
  });
});

describe('the feed and its fallback', () => {
  it('a fresh value binds; once stale the fallback does, at exactly the stale moment', () => {
    const time = new FakeTime(MONDAY);
    const b = board(time, { feed: { fallbackWatts: 25_000 } });
    // no value yet: the fallback holds from boot
    expect(b.limit('site')).toEqual({ nodeId: 'site', watts: 25_000, source: 'fallback' });
    b.feedValue('site', 60_000, 30_000);
    expect(b.limit('site')).toEqual({ nodeId: 'site', watts: 60_000, source: 'feed' });
    time.advanceTo(MONDAY + 29_999);
    expect(b.limit('site').source).toBe('feed');
    time.advanceTo(MONDAY + 30_000);
    expect(b.limit('site')).toEqual({ nodeId: 'site', watts: 25_000, source: 'fallback' });
    // a circuit is covered once it has had a value; its fallback is half its contract
    b.feedValue('c1', 5_000, 1000);
    expect(b.limit('c1')).toEqual({ nodeId: 'c1', watts: 5_000, source: 'feed' });
    time.advanceTo(MONDAY + 31_000);
    expect(b.limit('c1')).toEqual({ nodeId: 'c1', watts: 20_000, source: 'fallback' });
  });

  it('the default fallback is the lowest schedule value of the node', () => {
    const time = new FakeTime(MONDAY);
    const b = board(time, {
      feed: {},
      schedule: [{ days: ['sat'], from: '10:00', to: '12:00', limitKw: 35 }],
    });
    expect(b.fallbackWatts('site')).toBe(35_000);
    expect(b.limit('site')).toEqual({ nodeId: 'site', watts: 35_000, source: 'fallback' });
  });

  it('a feed value above the contract leaves the contract binding', () => {
    const time = new FakeTime(MONDAY);
    const b = board(time, { feed: { fallbackWatts: 10_000 } });
    b.feedValue('site', 500_000, 60_000);
    expect(b.limit('site')).toEqual({ nodeId: 'site', watts: 100_000, source: 'config' });
  });
});

describe('operator overrides', () => {
  it('lower the limit until they expire or are cleared', () => {
    const time = new FakeTime(MONDAY);
    const b = board(time);
    const o: OperatorOverride = {
      nodeId: 'site',
      watts: 45_000,
      reason: 'transformer maintenance',
      expiresAtMs: MONDAY + HOUR,
      setBy: 'otto',
      setAtMs: MONDAY,
    };
    expect(b.setOverride(o)).toEqual({ nodeId: 'site', watts: 45_000, source: 'operator' });
    expect(time.next()).toBe(MONDAY + HOUR);
    time.advanceTo(MONDAY + HOUR);
    expect(b.limit('site').source).toBe('config');
    expect(b.override('site')).toBeUndefined();
    b.setOverride({ ...o, expiresAtMs: null });
    expect(b.limit('site').watts).toBe(45_000);
    expect(b.clearOverride('site')).toBe(true);
    expect(b.clearOverride('site')).toBe(false);
    expect(b.limit('site').source).toBe('config');
  });
});

/** The board's inputs, as a property test draws them. */
type Step =
  | { kind: 'override'; node: string; watts: number; forMs: number | null }
  | { kind: 'clear'; node: string }
  | { kind: 'feed'; node: string; watts: number; validMs: number }
  | { kind: 'advance'; ms: number };

const NODES = { site: 100_000, c1: 40_000, c2: 60_000 };
const nodeArb = fc.constantFrom(...Object.keys(NODES));
const wattsArb = fc.integer({ min: 0, max: 200_000 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('override' as const),
    node: nodeArb,
    watts: wattsArb,
    forMs: fc.option(fc.integer({ min: 1, max: 6 * HOUR }), { nil: null }),
  }),
  fc.record({ kind: fc.constant('clear' as const), node: nodeArb }),
  fc.record({
    kind: fc.constant('feed' as const),
    node: nodeArb,
    watts: wattsArb,
    validMs: fc.integer({ min: 1, max: 2 * HOUR }),
  }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 12 * HOUR }) }),
);
const windowArb: fc.Arbitrary<ScheduleWindowSpec> = fc.record({
  node: fc.option(fc.constantFrom('c1', 'c2'), { nil: undefined }),
  days: fc.uniqueArray(fc.constantFrom('mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun' as const), {
    minLength: 1,
  }),
  from: fc
    .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
    .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`),
  to: fc
    .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
    .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`),
  limitKw: fc.integer({ min: 0, max: 150 }),
});

describe('board properties (every mix of sources and times)', () => {
  it('never above the contract, always the lowest constraint, expired overrides and stale values gone, one notice per change', () => {
    fc.assert(
      fc.property(
        fc.array(windowArb, { maxLength: 4 }),
        fc.boolean(),
        fc.array(stepArb, { maxLength: 40 }),
        (windows, withFeed, steps) => {
          const time = new FakeTime(MONDAY);
          const b = board(time, {
            nodes: NODES,
            schedule: windows,
            ...(withFeed ? { feed: {} } : {}),
          });
          const snapshot = () => JSON.stringify(Object.keys(NODES).map((n) => b.limit(n)));
          const heard: string[] = [snapshot()];
          b.onChange(() => {
            const now = snapshot();
            // a notice always carries a change
            expect(now).not.toBe(heard.at(-1));
            heard.push(now);
          });
          const overrides = new Map<string, number | null>();
          const feeds = new Map<string, number>();
          for (const step of steps) {
            if (step.kind === 'override') {
              const expiresAtMs = step.forMs === null ? null : time.now() + step.forMs;
              b.setOverride({
                nodeId: step.node,
                watts: step.watts,
                reason: 'p',
                expiresAtMs,
                setBy: 'p',
                setAtMs: time.now(),
              });
              overrides.set(step.node, expiresAtMs);
            } else if (step.kind === 'clear') {
              b.clearOverride(step.node);
              overrides.delete(step.node);
            } else if (step.kind === 'feed') {
              b.feedValue(step.node, step.watts, step.validMs);
              feeds.set(step.node, time.now() + step.validMs);
            } else {
              time.advanceTo(time.now() + step.ms);
            }
            // no change goes unheard
            expect(heard.at(-1)).toBe(snapshot());
            const now = time.now();
            for (const [node, contractW] of Object.entries(NODES)) {
              const limit = b.limit(node);
              const constraints = b.constraints(node);
              expect(limit.watts).toBeLessThanOrEqual(contractW);
              expect(limit.watts).toBe(Math.min(...constraints.map((c) => c.watts)));
              expect(
                constraints.some((c) => c.source === limit.source && c.watts === limit.watts),
              ).toBe(true);
              const expiry = overrides.get(node);
              const overrideLive = overrides.has(node) && (expiry === null || (expiry ?? 0) > now);
              expect(constraints.some((c) => c.source === 'operator')).toBe(overrideLive);
              if (!overrideLive) expect(b.override(node)).toBeUndefined();
              const freshUntil = feeds.get(node);
              const fresh = freshUntil !== undefined && now < freshUntil;
              expect(constraints.some((c) => c.source === 'feed')).toBe(fresh);
              const covered = withFeed && (node === 'site' || freshUntil !== undefined);
              expect(constraints.some((c) => c.source === 'fallback')).toBe(covered && !fresh);
            }
          }
          b.close();
        },
      ),
      { numRuns: 300 },
    );
  });
});
