import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OcppCall } from '../src/ocpp/central-system.js';
import type { MeterSample } from '../src/ocpp/port.js';
import { LiveMeters } from '../src/operator/live-meters.js';
import { RecentCalls } from '../src/operator/recent-calls.js';
import { NumberRing } from '../src/shared/number-ring.js';

const T0 = Date.parse('2026-11-26T10:00:00.000Z');

const call = fc.record<OcppCall>({
  action: fc.constantFrom('Heartbeat', 'MeterValues', 'TransactionEvent', 'RemoteStartTransaction'),
  direction: fc.constantFrom('in', 'out'),
  outcome: fc.constantFrom('ok', 'error', 'timeout'),
  seconds: fc.double({ min: 0, max: 60, noNaN: true }),
});

interface Reading {
  energyWh: number | null;
  powerW: number | null;
  socPercent: number | null;
  timestamp: string;
}

const reading = fc.record<Reading>({
  energyWh: fc.option(fc.double({ min: 0, max: 1e9, noNaN: true })),
  powerW: fc.option(fc.double({ min: -1e6, max: 1e6, noNaN: true })),
  socPercent: fc.option(fc.integer({ min: 0, max: 100 })),
  // The adapters rewrite every readable clock as ISO UTC with ms; an unreadable one comes as sent.
  timestamp: fc.oneof(
    fc.integer({ min: 0, max: 10 ** 9 }).map((s) => new Date(T0 + s).toISOString()),
    fc.constantFrom('not a date', '2026-11-26 10:00', ''),
  ),
});

function sample(r: Reading, i: number): MeterSample {
  return {
    chargerId: 'CP-1',
    connectorId: '1',
    transactionRef: 'tx-1',
    live: true,
    receivedAtMs: T0 + i,
    time: { stampMs: T0 + i, measuredAtMs: T0 + i, epoch: 0 },
    ...r,
  };
}

describe('NumberRing, the console history rings', () => {
  it('holds exactly the last `capacity` records written, oldest first, for every sequence', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.option(fc.double({ noNaN: true })), { maxLength: 40 }),
        (capacity, values) => {
          const ring = new NumberRing(capacity, 2);
          values.forEach((value, i) => {
            const r = ring.claim();
            ring.write(r, 0, value);
            ring.write(r, 1, i);
            const held = ring.oldestFirst().map((h) => [ring.read(h, 0), ring.read(h, 1)]);
            const expected = values.slice(0, i + 1).map((v, k) => [v, k]);
            expect(held).toEqual(expected.slice(-capacity));
          });
        },
      ),
    );
  });

  it('grows as it fills, to exactly `capacity` records and never beyond', () => {
    const ring = new NumberRing(120, 5);
    expect(ring.cells.length).toBe(0);
    ring.write(ring.claim(), 0, 0.5);
    expect(ring.cells.length).toBe(4 * 5);
    const lengths = new Set<number>();
    for (let i = 0; i < 500; i++) {
      ring.write(ring.claim(), 0, i + 0.5);
      lengths.add(ring.cells.length);
    }
    expect([...lengths]).toEqual([4, 8, 16, 32, 64, 120].map((n) => n * 5));
    expect(ring.oldestFirst().map((r) => ring.read(r, 0))).toEqual(
      Array.from({ length: 120 }, (_, i) => 380 + i + 0.5),
    );
  });
});

/** Recent calls after a charger sent `count` calls of actions it made up (Vendor0, Vendor1, …). */
function inventing(chargerId: string, count: number, outcome: 'ok' | 'error'): RecentCalls {
  const recent = new RecentCalls();
  for (let i = 0; i < count; i++) {
    recent.record(chargerId, { action: `Vendor${i}`, direction: 'in', outcome, seconds: 0 }, T0);
  }
  return recent;
}

describe('RecentCalls and LiveMeters keep what they were told, in numbers', () => {
  it('recent calls: the last 50 of a charger, newest first, exactly as recorded', () => {
    fc.assert(
      fc.property(fc.array(call, { minLength: 30, maxLength: 140 }), (calls) => {
        const recent = new RecentCalls();
        calls.forEach((c, i) => recent.record('CP-1', c, T0 + i * 1000));
        const expected = calls
          .map((c, i) => ({ ...c, at: new Date(T0 + i * 1000).toISOString() }))
          .slice(-50)
          .reverse();
        expect(recent.of('CP-1')).toEqual(expected);
        expect(recent.of('CP-2')).toEqual([]);
      }),
    );
  });

  it('recent calls: a parsed frame’s action name is held as one shared copy', () => {
    const recent = new RecentCalls();
    for (let i = 0; i < 3; i++) {
      const [action] = JSON.parse('["Heartbeat"]') as [string];
      recent.record(`CP-${i}`, { action, direction: 'in', outcome: 'ok', seconds: 0.01 }, T0);
    }
    expect(recent.of('CP-2')[0]?.action).toBe('Heartbeat');
  });

  it('recent calls: a charger inventing action names past the shared table keeps its own', () => {
    const recent = inventing('CP-1', 1_100, 'error');
    recent.record('CP-1', { action: 'Heartbeat', direction: 'in', outcome: 'ok', seconds: 0 }, T0);
    expect(recent.of('CP-1').map((c) => c.action)).toEqual([
      'Heartbeat',
      ...Array.from({ length: 49 }, (_, i) => `Vendor${1_099 - i}`),
    ]);
  });

  it('recent calls: an unlisted action keeps its direction and outcome (one field holds all three)', () => {
    const recent = inventing('CP-0', 1_024, 'ok');
    const kinds = [
      ['in', 'ok'],
      ['in', 'error'],
      ['in', 'timeout'],
      ['out', 'ok'],
      ['out', 'error'],
      ['out', 'timeout'],
    ] as const;
    for (const [direction, outcome] of kinds) {
      recent.record('CP-1', { action: 'Unlisted', direction, outcome, seconds: 0.5 }, T0);
      recent.record('CP-1', { action: 'Vendor7', direction, outcome, seconds: 0.25 }, T0);
    }
    expect(
      recent
        .of('CP-1')
        .reverse()
        .map(({ action, direction, outcome, seconds }) => [action, direction, outcome, seconds]),
    ).toEqual(
      kinds.flatMap(([direction, outcome]) => [
        ['Unlisted', direction, outcome, 0.5],
        ['Vendor7', direction, outcome, 0.25],
      ]),
    );
  });

  it('live meters: the last 120 samples of a transaction, nulls and the charger’s clock kept', () => {
    fc.assert(
      fc.property(fc.array(reading, { minLength: 100, maxLength: 300 }), (readings) => {
        const live = new LiveMeters();
        readings.forEach((r, i) => live.record(sample(r, i)));
        const expected = readings
          .map((r, i) => ({
            energyWh: r.energyWh,
            powerW: r.powerW,
            socPercent: r.socPercent,
            timestamp: r.timestamp,
            transactionRef: 'tx-1',
            receivedAt: new Date(T0 + i).toISOString(),
          }))
          .slice(-120);
        expect(live.transaction('CP-1', 'tx-1')).toEqual(expected);
        const last = expected.at(-1);
        expect(live.connector('CP-1', '1')).toEqual(last);
      }),
      { numRuns: 50 },
    );
  });

  it('live meters: a sample outside a transaction is the connector’s latest only', () => {
    const live = new LiveMeters();
    live.record({
      ...sample(
        { energyWh: 5, powerW: null, socPercent: null, timestamp: new Date(T0).toISOString() },
        0,
      ),
      transactionRef: null,
    });
    expect(live.connector('CP-1', '1')?.energyWh).toBe(5);
    expect(live.transaction('CP-1', 'tx-1')).toEqual([]);
  });
});
