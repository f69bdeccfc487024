import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocate, type AllocationSession } from '../src/power/allocator.js';

interface Site {
  limits: Map<string, number>;
  sessions: AllocationSession[];
}

/** A site, up to 4 circuits (each under the site or an earlier circuit), up to 12 sessions. */
const siteArb: fc.Arbitrary<Site> = fc
  .record({
    siteW: fc.integer({ min: 0, max: 200_000 }),
    circuits: fc.array(
      fc.record({ parent: fc.nat(), limitW: fc.integer({ min: 0, max: 100_000 }) }),
      { maxLength: 4 },
    ),
    sessions: fc.array(
      fc.record({
        node: fc.nat(),
        minW: fc.integer({ min: 0, max: 10_000 }),
        extraW: fc.integer({ min: 0, max: 50_000 }),
        owedWh: fc.integer({ min: 0, max: 80_000 }),
        acceptsProfiles: fc.integer({ min: 0, max: 5 }).map((n) => n > 0),
        startOrder: fc.integer({ min: 0, max: 20 }),
      }),
      { maxLength: 12 },
    ),
  })
  .map(({ siteW, circuits, sessions }) => {
    const limits = new Map<string, number>([['site', siteW]]);
    const paths: string[][] = [['site']];
    circuits.forEach((c, i) => {
      const parent = paths[c.parent % paths.length] ?? ['site'];
      const id = `c${i}`;
      limits.set(id, c.limitW);
      paths.push([...parent, id]);
    });
    return {
      limits,
      sessions: sessions.map((s, i) => ({
        sessionId: `s${i}`,
        path: paths[s.node % paths.length] ?? ['site'],
        minW: s.minW,
        maxW: s.minW + s.extraW,
        owedWh: s.owedWh,
        acceptsProfiles: s.acceptsProfiles,
        startOrder: s.startOrder,
      })),
    };
  });

const policyArb = fc.constantFrom('equal' as const, 'owed-weighted' as const);
const watts = (a: number | 'waiting' | undefined): number => (typeof a === 'number' ? a : 0);

describe('allocator', () => {
  it('keeps every node within its limit (refusing chargers counted at their max)', () => {
    fc.assert(
      fc.property(siteArb, policyArb, ({ limits, sessions }, policy) => {
        const result = allocate(limits, sessions, policy);
        for (const [node, limitW] of limits) {
          const here = sessions.filter((s) => s.path.includes(node));
          const refused = here
            .filter((s) => !s.acceptsProfiles)
            .reduce((sum, s) => sum + s.maxW, 0);
          const managed = here
            .filter((s) => s.acceptsProfiles)
            .reduce((sum, s) => sum + watts(result.get(s.sessionId)), 0);
          // What refusing chargers draw is beyond our control; the rest never adds to it past the limit.
          expect(managed).toBeLessThanOrEqual(Math.max(0, limitW - refused));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('gives every session a number between its min and max, or waiting', () => {
    fc.assert(
      fc.property(siteArb, policyArb, ({ limits, sessions }, policy) => {
        const result = allocate(limits, sessions, policy);
        expect(result.size).toBe(sessions.length);
        for (const s of sessions) {
          const a = result.get(s.sessionId);
          if (!s.acceptsProfiles) expect(a).toBe(s.maxW);
          else if (a !== 'waiting') {
            expect(Number.isInteger(a)).toBe(true);
            expect(a).toBeGreaterThanOrEqual(s.minW);
            expect(a).toBeLessThanOrEqual(s.maxW);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('makes the most recently started wait: a waiting session never started before a running one on its node', () => {
    fc.assert(
      fc.property(siteArb, policyArb, ({ limits, sessions }, policy) => {
        const result = allocate(limits, sessions, policy);
        const managed = sessions.filter((s) => s.acceptsProfiles);
        const onlySite = managed.every((s) => s.path.length === 1);
        if (!onlySite) return;
        const waiting = managed.filter((s) => result.get(s.sessionId) === 'waiting');
        const running = managed.filter((s) => result.get(s.sessionId) !== 'waiting');
        for (const w of waiting)
          for (const r of running) expect(r.startOrder).toBeLessThanOrEqual(w.startOrder);
      }),
      { numRuns: 500 },
    );
  });

  it('splits equally when no one is held by a minimum, a maximum or a circuit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1000, max: 500_000 }),
        (n, siteW) => {
          const sessions = Array.from({ length: n }, (_, i) => ({
            sessionId: `s${i}`,
            path: ['site'],
            minW: 0,
            maxW: 1_000_000,
            owedWh: 1000 * (i + 1),
            acceptsProfiles: true,
            startOrder: i,
          }));
          const result = allocate(new Map([['site', siteW]]), sessions, 'equal');
          const shares = [...result.values()].map(watts);
          expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
          expect(shares.reduce((a, b) => a + b, 0)).toBeGreaterThan(siteW - n - 1);
        },
      ),
    );
  });

  it('gives a capped session’s rest to the others (water-filling)', () => {
    const s = (id: string, maxW: number): AllocationSession => ({
      sessionId: id,
      path: ['site'],
      minW: 0,
      maxW,
      owedWh: 0,
      acceptsProfiles: true,
      startOrder: 0,
    });
    const result = allocate(new Map([['site', 30_000]]), [
      s('a', 7_400),
      s('b', 50_000),
      s('c', 50_000),
    ]);
    expect(Object.fromEntries(result)).toEqual({ a: 7_400, b: 11_300, c: 11_300 });
  });

  it('weights by the energy owed under owed-weighted', () => {
    const s = (id: string, owedWh: number): AllocationSession => ({
      sessionId: id,
      path: ['site'],
      minW: 0,
      maxW: 100_000,
      owedWh,
      acceptsProfiles: true,
      startOrder: 0,
    });
    const result = allocate(
      new Map([['site', 30_000]]),
      [s('a', 10_000), s('b', 20_000)],
      'owed-weighted',
    );
    expect(Object.fromEntries(result)).toEqual({ a: 10_000, b: 20_000 });
  });

  it('is deterministic whatever the order of its input', () => {
    fc.assert(
      fc.property(siteArb, policyArb, fc.nat(), ({ limits, sessions }, policy, seed) => {
        const shuffled = [...sessions].sort(
          (a, b) => ((a.sessionId.length * 31 + seed) % 7) - ((b.sessionId.length * 17 + seed) % 5),
        );
        expect(allocate(limits, shuffled, policy)).toEqual(allocate(limits, sessions, policy));
      }),
      { numRuns: 300 },
    );
  });

  it('on a lower site limit: nobody starts, the site total never rises, and nobody rises unless another now waits', () => {
    fc.assert(
      fc.property(siteArb, policyArb, fc.integer({ min: 0, max: 200_000 }), (site, policy, cut) => {
        const before = allocate(site.limits, site.sessions, policy);
        const lowered = new Map(site.limits);
        lowered.set('site', Math.max(0, (site.limits.get('site') ?? 0) - cut));
        const after = allocate(lowered, site.sessions, policy);
        const managed = site.sessions.filter((s) => s.acceptsProfiles);
        const total = (a: Map<string, number | 'waiting'>): number =>
          managed.reduce((sum, s) => sum + watts(a.get(s.sessionId)), 0);
        expect(total(after)).toBeLessThanOrEqual(total(before));
        let newlyWaiting = false;
        for (const s of managed) {
          if (before.get(s.sessionId) === 'waiting') expect(after.get(s.sessionId)).toBe('waiting');
          else if (after.get(s.sessionId) === 'waiting') newlyWaiting = true;
        }
        if (newlyWaiting) return;
        for (const s of managed) {
          expect(watts(after.get(s.sessionId))).toBeLessThanOrEqual(watts(before.get(s.sessionId)));
        }
      }),
      { numRuns: 1000 },
    );
  });
});
