import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RAMP_MS } from '../src/power/allowance-history.js';
import type { LimitReader } from '../src/power/limits.js';
import { LoadManager } from '../src/power/load-manager.js';
import type { ActiveSession } from '../src/power/power-model.js';
import { PowerListener } from '../src/power/power-listener.js';
import type { PowerLimit } from '../src/ocpp/port.js';
import { createLogger } from '../src/shared/log.js';

/**
 * The load manager judges a power reading at the time it was measured: a charger that obeyed
 * every profile (within the ramp time after each change) is never found drawing past one,
 * whenever its readings arrive, replays after a later, lower profile included.
 */

interface Step {
  fromMs: number;
  watts: number;
}

/** One charger, one session, on a site whose limit the test moves; every profile accepted at once. */
function site() {
  let nowMs = Date.parse('2026-11-27T12:00:00Z');
  let siteW = 22_000;
  const listeners = new Set<() => void>();
  const limits: LimitReader = {
    limit: (nodeId) => ({ nodeId, watts: siteW, source: 'operator' }),
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const session: ActiveSession = {
    sessionId: 's-A',
    chargerId: 'A',
    connectorId: '1',
    transactionRef: 'tx-A',
    owedWh: 50_000,
    startedAtMs: 1,
  };
  /** What the charger accepted for its transaction, and when. */
  const steps: Step[] = [];
  const reallocations: string[] = [];
  const manager = new LoadManager({
    log: createLogger('silent'),
    limits,
    nodeIds: ['site'],
    policy: 'equal',
    connectors: () => [
      {
        chargerId: 'A',
        connectorId: '1',
        path: ['site'],
        minW: 0,
        maxW: 22_000,
        phases: undefined,
      },
    ],
    active: () => [session],
    now: () => nowMs,
    retryMs: 60_000,
    counters: { reallocation: (reason) => reallocations.push(reason), refusal: () => undefined },
    chargers: {
      isOnline: () => true,
      setPowerLimit: async (_chargerId: string, _connectorId: string, limit: PowerLimit) => {
        if (limit.transactionRef && limit.watts !== null)
          steps.push({ fromMs: nowMs, watts: limit.watts });
        return 'accepted' as const;
      },
    },
  });
  const events = new PowerListener(manager);
  return {
    manager,
    steps,
    reallocations,
    advance: (ms: number) => (nowMs += ms),
    now: () => nowMs,
    async setLimit(watts: number) {
      siteW = watts;
      for (const listener of listeners) listener();
      await manager.settled();
    },
    read(powerW: number, measuredAtMs: number) {
      events.meterSample({
        chargerId: 'A',
        connectorId: '1',
        transactionRef: 'tx-A',
        energyWh: 100,
        powerW,
        socPercent: null,
        timestamp: new Date(measuredAtMs).toISOString(),
        receivedAtMs: nowMs,
        time: { stampMs: measuredAtMs, measuredAtMs, epoch: 0 },
        live: true,
      });
    },
  };
}

/** The most the charger may have drawn at `atMs`: any allowance in force in the ramp time before. */
function mostAllowed(steps: readonly Step[], atMs: number): number {
  const inForce = (t: number) => steps.filter((s) => s.fromMs <= t).at(-1)?.watts ?? 0;
  const changed = steps.filter((s) => s.fromMs > atMs - RAMP_MS && s.fromMs <= atMs);
  return Math.max(inForce(atMs - RAMP_MS), ...changed.map((s) => s.watts));
}

describe('load manager: readings judged when they were measured', () => {
  it('a charger that obeyed every profile in time is never found drawing past one, in whatever order its readings arrive', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            afterMs: fc.integer({ min: 100, max: 20_000 }),
            limitW: fc.integer({ min: 0, max: 22_000 }),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        fc.array(
          fc.record({
            at: fc.double({ min: 0, max: 1, noNaN: true }),
            share: fc.double({ min: 0, max: 1, noNaN: true }),
          }),
          {
            minLength: 2,
            maxLength: 12,
          },
        ),
        async (changes, readings) => {
          const h = site();
          h.manager.start();
          await h.manager.reallocate('session_start');
          const first = h.steps[0]?.fromMs ?? h.now();
          for (const c of changes) {
            h.advance(c.afterMs);
            await h.setLimit(c.limitW);
          }
          h.advance(1_000);
          // Taken any time from the first profile's ramp on, sent now (a replay after the last change).
          const span = h.now() - first - RAMP_MS;
          for (const r of readings) {
            const atMs = first + RAMP_MS + Math.floor(r.at * span);
            h.read(Math.floor(r.share * mostAllowed(h.steps, atMs)), atMs);
          }
          await h.manager.settled();
          expect(h.reallocations).not.toContain('overdraw');
          expect(h.manager.view().sessions[0]?.refusesProfiles).toBe(false);
          h.manager.close();
        },
      ),
      { numRuns: 200 },
    );
  });

  it('two readings past every allowance that held when they were measured are a charger that does not obey', async () => {
    const h = site();
    h.manager.start();
    await h.manager.reallocate('session_start');
    h.advance(RAMP_MS);
    await h.setLimit(10_000);
    const lowered = h.now();
    // Within the ramp time after the lower: 22 kW is still allowed.
    h.advance(RAMP_MS);
    h.read(22_000, lowered + 1_000);
    h.read(22_000, lowered + 2_000);
    expect(h.manager.view().sessions[0]?.refusesProfiles).toBe(false);
    // Past it, twice: it does not obey.
    h.advance(1_000);
    h.read(22_000, lowered + RAMP_MS);
    h.read(22_000, lowered + RAMP_MS + 1_000);
    await h.manager.settled();
    expect(h.manager.view().sessions[0]?.refusesProfiles).toBe(true);
    h.manager.close();
  });

  it('readings taken under a lower profile, arriving after a raise, are not a charger drawing less than it may', async () => {
    const h = site();
    h.manager.start();
    await h.manager.reallocate('session_start');
    h.advance(RAMP_MS);
    await h.setLimit(10_000);
    h.advance(10_000);
    await h.setLimit(22_000);
    const raised = h.now();
    h.advance(500);
    // 9.5 kW under the 10 kW profile it had then: what it was allowed, not a taper.
    h.read(9_500, raised - 2_000);
    h.read(9_500, raised - 1_000);
    await h.manager.settled();
    expect(h.reallocations).not.toContain('under_draw');
    expect(h.manager.confirmedPowerW('s-A')).toBe(22_000);
    h.manager.close();
  });
});
