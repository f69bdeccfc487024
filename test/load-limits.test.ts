import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config/read-config.js';
import type { GatewayConfigInput } from '../src/config/schema.js';
import { startTestGateway, testConfig, type TestGateway } from './helpers/gateway.js';
import { startBroker, type TestBroker } from './helpers/mqtt-broker.js';
import { createOperator, op } from './helpers/operator.js';
import { waitUntil } from './helpers/wait.js';
import type { EdgeTimers } from '../src/power/edge-timer.js';
import { LimitBoard, type OperatorOverride } from '../src/power/limit-board.js';
import { feedPayloadSchema } from '../src/power/limit-feed.js';
import type { LimitReader, NodeLimit } from '../src/power/limits.js';
import { PowerSchedule, type ScheduleWindowSpec } from '../src/power/schedule.js';
import { instantOf, localTime } from '../src/shared/local-time.js';

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

describe('schedule edges against the wall clock, DST zones included', () => {
  it('every change of what is in force happens at an edge the timer is armed for', () => {
    const starts = [
      ['Europe/Berlin', '2026-03-28T12:00:00Z'],
      ['Europe/Berlin', '2026-10-24T12:00:00Z'],
      ['America/New_York', '2026-03-07T12:00:00Z'],
      ['America/New_York', '2026-10-31T12:00:00Z'],
      ['Australia/Lord_Howe', '2026-04-04T06:00:00Z'], // goes back by 30 minutes
      [LAGOS, '2026-11-22T12:00:00Z'],
    ] as const;
    fc.assert(
      fc.property(
        fc.constantFrom(...starts),
        fc.array(windowArb, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 0, max: 12 * 60 }),
        ([zone, iso], windows, offsetMinutes) => {
          const s = new PowerSchedule(windows, zone, 'site');
          const t0 = Date.parse(iso) + offsetMinutes * 60_000;
          const edges = new Set<number>();
          for (let e = s.nextEdge(t0); e !== undefined && e <= t0 + 36 * HOUR; e = s.nextEdge(e))
            edges.add(e);
          const state = (ms: number) => JSON.stringify([...s.inForce(ms)].sort());
          let before = state(t0);
          for (let m = t0 + 60_000; m <= t0 + 36 * HOUR; m += 60_000) {
            const now = state(m);
            if (now !== before)
              expect(edges.has(m), `${zone} ${new Date(m).toISOString()}`).toBe(true);
            before = now;
          }
        },
      ),
      { numRuns: 40 },
    );
  });
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

describe('power config: schedule, feed and time zone', () => {
  const power = (extra: Record<string, unknown>) => ({
    limitKw: 100,
    circuits: [{ id: 'dc-bank', limitKw: 60, connectors: ['CP-1/1', 'CP-1/2'] }],
    ...extra,
  });
  const parse = (extra: Partial<GatewayConfigInput>) =>
    parseConfig({ ...testConfig('/tmp/x'), ...extra } as GatewayConfigInput);

  it('defaults to Lagos and accepts windows over midnight on the site or a circuit', () => {
    const c = parse({
      power: power({
        schedule: [
          { days: ['mon', 'sun'], from: '18:00', to: '06:00', limitKw: 40 },
          { node: 'dc-bank', days: ['sat'], from: '00:00', to: '00:00', limitKw: 20 },
        ],
      }),
    });
    expect(c.site.timeZone).toBe('Africa/Lagos');
    expect(c.power?.schedule).toHaveLength(2);
  });

  it('refuses an unknown zone, node, day or time, and a feed without the uplink', () => {
    const bad: Partial<GatewayConfigInput>[] = [
      { site: { timeZone: 'Mars/Olympus' }, power: power({}) },
      {
        power: power({
          schedule: [{ node: 'nope', days: ['mon'], from: '01:00', to: '02:00', limitKw: 1 }],
        }),
      },
      {
        power: power({ schedule: [{ days: ['monday'], from: '01:00', to: '02:00', limitKw: 1 }] }),
      },
      { power: power({ schedule: [{ days: ['mon'], from: '24:00', to: '02:00', limitKw: 1 }] }) },
      { power: power({ schedule: [{ days: [], from: '01:00', to: '02:00', limitKw: 1 }] }) },
      { power: power({ feed: { topic: 'site/limit' } }) },
      { uplink: { url: 'mqtt://127.0.0.1:1' }, power: power({ feed: { topic: 'site/#' } }) },
    ];
    for (const extra of bad) {
      expect(() => parse(extra), JSON.stringify(extra)).toThrow(ConfigError);
    }
  });
});

describe('the feed payload', () => {
  it('the published JSON Schema (schemas/mqtt/power-limit.json) and the edge validation agree', () => {
    const schema = JSON.parse(
      readFileSync(join(import.meta.dirname, '..', 'schemas', 'mqtt', 'power-limit.json'), 'utf8'),
    ) as object;
    const validate = new Ajv2020({ strict: true }).compile(schema);
    const value = fc.oneof(
      fc.double({ min: -10, max: 2_000_000, noNaN: true }),
      fc.constantFrom(0, 86_400, 86_400.5, 1_000_000, 1_000_000.001),
      fc.string({ maxLength: 70 }),
      fc.boolean(),
      fc.constant(null),
    );
    const candidate = fc.record(
      { limitKw: value, node: value, validForSeconds: value, other: value },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(candidate, (c) => {
        expect(feedPayloadSchema.safeParse(c).success).toBe(validate(c));
      }),
      { numRuns: 2000 },
    );
  });
});

const FEED_TOPIC = 'depot/meter/power-limit';
const METRICS_TOKEN = 'metrics-scraper-token-0001';

describe('run-time limits on a running gateway (operator API, CLI, MQTT feed)', () => {
  let broker: TestBroker;
  let t: TestGateway;
  let publisher: MqttClient;
  let viewer: string;
  let operator: string;

  interface NodeBody {
    nodeId: string;
    limitKw: number;
    source: string;
    contractKw: number;
    override: { limitKw: number; reason: string; expiresAt: string | null; setBy: string } | null;
    constraints: { source: string; limitKw: number }[];
  }
  interface LimitsBody {
    timeZone: string;
    nodes: NodeBody[];
    feed: {
      accepted: number;
      rejected: Record<string, number>;
      readings: { nodeId: string; fresh: boolean }[];
    } | null;
  }
  const limits = async () =>
    (await op(t.gw.operatorUrl, viewer, 'GET', '/site/power/limits')).body as LimitsBody;
  const node = async (id: string) =>
    (await limits()).nodes.find((n) => n.nodeId === id) as NodeBody;
  const publish = (payload: string, retain = false) =>
    new Promise<void>((resolve, reject) =>
      publisher.publish(FEED_TOPIC, payload, { qos: 1, retain }, (err) =>
        err ? reject(err) : resolve(),
      ),
    );

  beforeAll(async () => {
    broker = await startBroker();
    t = await startTestGateway({
      uplink: { url: broker.url, reconnectSeconds: 0.2 },
      power: {
        limitKw: 100,
        circuits: [{ id: 'dc-bank', limitKw: 60, connectors: ['CP-1/1', 'CP-1/2'] }],
        feed: { topic: FEED_TOPIC, staleAfterSeconds: 600, fallbackKw: 30 },
      },
      metrics: { bearerTokenSha256: createHash('sha256').update(METRICS_TOKEN).digest('hex') },
    });
    viewer = createOperator(t.gw.db, 'vera', 'viewer');
    operator = createOperator(t.gw.db, 'otto', 'operator');
    publisher = await mqtt.connectAsync(broker.url, { clientId: 'site-meter', clean: true });
  });
  afterAll(async () => {
    await publisher?.endAsync();
    await t?.close();
    await broker?.close();
  });

  it('starts on the fallback until the feed speaks; a live value binds, a retained or invalid one never', async () => {
    expect(await node('site')).toMatchObject({ limitKw: 30, source: 'fallback', contractKw: 100 });
    // The gateway's subscription is up once a live value gets through.
    await waitUntil(
      async () => {
        await publish(JSON.stringify({ limitKw: 70 }));
        return (await node('site')).source === 'feed';
      },
      10_000,
      'first feed value',
    );
    expect(await node('site')).toMatchObject({ limitKw: 70, source: 'feed' });
    for (const bad of [
      'not json',
      JSON.stringify({ limitKw: -5 }),
      JSON.stringify({ limitKw: '20' }),
      JSON.stringify({ limitKw: 20, extra: true }),
      JSON.stringify({ limitKw: 20, node: 'ghost' }),
    ]) {
      await publish(bad);
    }
    const feed = await waitUntil(
      async () => {
        const f = (await limits()).feed;
        const r = f?.rejected ?? {};
        return (r.not_json ?? 0) + (r.invalid ?? 0) + (r.unknown_node ?? 0) >= 5 && f;
      },
      10_000,
      'rejections counted',
    );
    expect(feed.rejected).toEqual({ not_json: 1, invalid: 3, unknown_node: 1, retained: 0 });
    expect(await node('site')).toMatchObject({ limitKw: 70, source: 'feed' });
    expect(
      t.logLines.filter((l) => l.includes('power limit feed message not applied')),
    ).toHaveLength(5);
    const scraped = await fetch(`${t.gw.operatorUrl}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const text = await scraped.text();
    expect(text).toContain('fleetgw_power_feed_messages_total{outcome="invalid"} 3');
    expect(text).toMatch(/fleetgw_power_feed_messages_total\{outcome="accepted"\} [1-9]/);
  });

  it('a value for a circuit goes stale after its validForSeconds and leaves the fallback', async () => {
    await publish(JSON.stringify({ limitKw: 12, node: 'dc-bank', validForSeconds: 0.3 }));
    await waitUntil(async () => (await node('dc-bank')).source === 'feed', 10_000, 'circuit fed');
    // The circuit's fallback: half its contract (no schedule, fallbackKw is the site's).
    const stale = await waitUntil(
      async () => {
        const n = await node('dc-bank');
        return n.source === 'fallback' && n;
      },
      10_000,
      'circuit value stale',
    );
    expect(stale.limitKw).toBe(30);
    expect((await limits()).feed?.readings.find((r) => r.nodeId === 'dc-bank')?.fresh).toBe(false);
  });

  it('PUT lowers a node for operators only, audited; above the contract is refused; DELETE clears it', async () => {
    const body = { limitKw: 22.5, reason: 'generator only until the grid is back' };
    const asViewer = await op(t.gw.operatorUrl, viewer, 'PUT', '/site/power/limits/site', body);
    expect(asViewer.status).toBe(403);
    expect((await op(t.gw.operatorUrl, null, 'PUT', '/site/power/limits/site', body)).status).toBe(
      401,
    );
    const unknown = await op(t.gw.operatorUrl, operator, 'PUT', '/site/power/limits/ghost', body);
    expect(unknown.status).toBe(404);
    const above = await op(t.gw.operatorUrl, operator, 'PUT', '/site/power/limits/site', {
      ...body,
      limitKw: 100.001,
    });
    expect(above.status).toBe(400);
    const past = await op(t.gw.operatorUrl, operator, 'PUT', '/site/power/limits/site', {
      ...body,
      expiresAt: new Date(Date.now() - 1000).toISOString(),
    });
    expect(past.status).toBe(400);
    expect(
      (await op(t.gw.operatorUrl, operator, 'PUT', '/site/power/limits/site', { limitKw: 1 }))
        .status,
    ).toBe(400);
    expect((await node('site')).override).toBeNull();

    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const set = await op(t.gw.operatorUrl, operator, 'PUT', '/site/power/limits/site', {
      ...body,
      expiresAt,
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      nodeId: 'site',
      limitKw: 22.5,
      source: 'operator',
      override: { limitKw: 22.5, reason: body.reason, expiresAt, setBy: 'otto' },
    });
    const audit = t.gw.db
      .prepare(
        "SELECT operator_name, status, params, result FROM operator_audit WHERE action = 'site.power.limit.set' ORDER BY seq",
      )
      .all() as { operator_name: string; status: number; params: string; result: string }[];
    expect(audit.map((a) => a.status)).toEqual([403, 404, 400, 400, 400, 200]);
    expect(JSON.parse(audit.at(-1)?.params ?? '{}')).toMatchObject({ body: { limitKw: 22.5 } });
    expect(JSON.parse(audit.at(-1)?.result ?? '{}')).toEqual({ limitKw: 22.5, source: 'operator' });

    // It outlives a restart: a restart never raises a limit the operator lowered. A retained
    // feed value (of unknown age) met at the new subscription is not applied.
    await publish(JSON.stringify({ limitKw: 5 }), true);
    await waitUntil(async () => (await node('site')).source === 'feed', 10_000, 'live value');
    await t.restart();
    const retained = await waitUntil(
      async () => ((await limits()).feed?.rejected.retained ?? 0) > 0 && (await limits()).feed,
      10_000,
      'retained value met',
    );
    expect(retained.rejected.retained).toBe(1);
    expect(retained.accepted).toBe(0);
    expect(await node('site')).toMatchObject({ limitKw: 22.5, source: 'operator' });
    await publish('', true);

    expect((await op(t.gw.operatorUrl, viewer, 'DELETE', '/site/power/limits/site')).status).toBe(
      403,
    );
    const cleared = await op(t.gw.operatorUrl, operator, 'DELETE', '/site/power/limits/site');
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({
      cleared: true,
      override: null,
      source: 'fallback',
      limitKw: 30,
    });
    const again = await op(t.gw.operatorUrl, operator, 'DELETE', '/site/power/limits/site');
    expect(again.body).toMatchObject({ cleared: false });
    const clears = t.gw.db
      .prepare(
        "SELECT status, result FROM operator_audit WHERE action = 'site.power.limit.clear' ORDER BY seq",
      )
      .all() as { status: number; result: string }[];
    expect(
      clears.map((c) => [c.status, (JSON.parse(c.result) as { cleared?: boolean }).cleared]),
    ).toEqual([
      [403, undefined],
      [200, true],
      [200, false],
    ]);
  });

  it('the CLI sets, shows and clears a limit through the API', async () => {
    const run = promisify(execFile);
    const credentialFile = join(t.dir, 'otto.credential');
    writeFileSync(credentialFile, operator);
    const cli = (...args: string[]) =>
      run(process.execPath, [join(import.meta.dirname, '..', 'dist', 'cli.js'), ...args], {
        env: {
          ...process.env,
          FLEET_GATEWAY_OPERATOR_URL: t.gw.operatorUrl,
          FLEET_GATEWAY_OPERATOR_CREDENTIAL_FILE: credentialFile,
        },
      });
    const set = await cli('site', 'limit', 'set', 'dc-bank', '15', '--reason', 'cable check');
    expect(set.stdout).toContain('dc-bank: 15 kW (operator; contract 60 kW)');
    expect((await node('dc-bank')).override).toMatchObject({ limitKw: 15, reason: 'cable check' });
    const shown = await cli('site', 'limits');
    expect(shown.stdout).toMatch(/dc-bank\s+15\s+operator\s+60\s+15/);
    const cleared = await cli('site', 'limit', 'clear', 'dc-bank');
    expect(cleared.stdout).toContain('operator limit cleared');
    await expect(cli('site', 'limit', 'set', 'dc-bank', 'ten', '--reason', 'x')).rejects.toThrow(
      /limitKw/,
    );
  });
});
