import { describe, expect, it } from 'vitest';
import type { LimitReader } from '../src/power/limits.js';
import { LoadManager } from '../src/power/load-manager.js';
import type { ActiveSession, ManagedConnector } from '../src/power/power-model.js';
import { PowerListener } from '../src/power/power-listener.js';
import { RAMP_MS } from '../src/power/allowance-history.js';
import {
  ChargerTimeoutError,
  type MeterSample,
  type PowerLimit,
  type StepOutcome,
} from '../src/ocpp/port.js';
import { createLogger } from '../src/shared/log.js';

/** One call the manager made, answered when the test says so. */
interface Call {
  chargerId: string;
  watts: number | null;
  answer(outcome: StepOutcome | Error): void;
}

/**
 * The rule that the sum of allowances never passes the limit while profiles are in flight, from
 * inside: the port answers when the test says, so a lower can be held or timed out on purpose.
 */
function harness(limitKw: number) {
  const calls: Call[] = [];
  const sessions: ActiveSession[] = [];
  const connectors: ManagedConnector[] = ['A', 'B', 'C'].map((chargerId) => ({
    chargerId,
    connectorId: '1',
    path: ['site'],
    minW: 0,
    maxW: 22_000,
    phases: undefined,
  }));
  // The site's limit, changed by the test as the operator, a schedule or the feed would.
  let siteW = limitKw * 1000;
  const listeners = new Set<() => void>();
  const limits: LimitReader = {
    limit: (nodeId) => ({ nodeId, watts: siteW, source: 'operator' }),
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const setLimit = (kw: number) => {
    siteW = kw * 1000;
    for (const listener of listeners) listener();
  };
  // The gateway's clock, moved by the test (readings are judged at the time they were measured).
  let nowMs = Date.parse('2026-11-27T12:00:00Z');
  const clock = { now: () => nowMs, advance: (ms: number) => (nowMs += ms) };
  const manager = new LoadManager({
    log: createLogger('silent'),
    now: clock.now,
    limits,
    nodeIds: ['site'],
    policy: 'equal',
    connectors: () => connectors,
    active: () => sessions,
    retryMs: 60_000,
    chargers: {
      isOnline: () => true,
      setPowerLimit: (chargerId: string, _connectorId: string, limit: PowerLimit) =>
        new Promise<StepOutcome>((resolve, reject) => {
          calls.push({
            chargerId,
            watts: limit.watts,
            answer: (o) => (o instanceof Error ? reject(o) : resolve(o)),
          });
        }),
    },
  });
  const session = (chargerId: string, startedAtMs: number): ActiveSession => ({
    sessionId: `s-${chargerId}`,
    chargerId,
    connectorId: '1',
    transactionRef: `tx-${chargerId}`,
    owedWh: 10_000,
    startedAtMs,
  });
  const flush = () => new Promise((r) => setImmediate(r));
  /** Starts the manager: each connector's safe default (10 kW of 30 for three) accepted. */
  const start = async () => {
    manager.start();
    await flush();
    expect(calls.map((c) => [c.chargerId, c.watts])).toEqual([
      ['A', 10_000],
      ['B', 10_000],
      ['C', 10_000],
    ]);
    for (const c of calls.splice(0)) c.answer('accepted');
    await flush();
    await manager.settled();
  };
  return { calls, sessions, manager, session, flush, start, setLimit, clock };
}

/** The calls made since `from`, as [charger, watts]. */
const sent = (calls: Call[], from = 0) => calls.slice(from).map((c) => [c.chargerId, c.watts]);

describe('load manager ordering', () => {
  it('sends no raise while a lower is unanswered, and none after it timed out', async () => {
    const h = harness(30);
    await h.start();
    h.sessions.push(h.session('A', 1));
    const first = h.manager.reallocate('session_start');
    await h.flush();
    // A may take 22 kW: the idle B and C defaults come down to the 8 kW left first.
    expect(sent(h.calls)).toEqual([
      ['B', 4_000],
      ['C', 4_000],
    ]);
    for (const c of h.calls) c.answer('accepted');
    await h.flush();
    expect(sent(h.calls, 2)).toEqual([['A', 22_000]]);
    h.calls[2]?.answer('accepted');
    await first;

    h.sessions.push(h.session('B', 2));
    const second = h.manager.reallocate('session_start');
    await h.flush();
    // A must come down to 15 kW (and C's default to 0) before B may go up: only the lowers are out.
    expect(sent(h.calls, 3)).toEqual([
      ['A', 15_000],
      ['C', 0],
    ]);
    h.calls[4]?.answer('accepted');
    h.calls[3]?.answer(new ChargerTimeoutError('no answer'));
    await second;
    // A still counts at its old 22 kW: B's raise to 15 kW would make 37 kW, so it never went out.
    expect(sent(h.calls, 5)).toEqual([]);
    expect(h.manager.view().nodes[0]).toMatchObject({ nodeId: 'site', watts: 30_000 });
    // The driver's read says what B's charger may draw: its 4 kW default, not the 15 kW held back.
    expect(h.manager.sessionPower('s-B')).toEqual({ allocatedW: 4_000, waiting: false });
    h.manager.close();
  });

  it('raises once every lower was accepted', async () => {
    const h = harness(30);
    await h.start();
    h.sessions.push(h.session('A', 1));
    const first = h.manager.reallocate('session_start');
    await h.flush();
    for (const c of h.calls) c.answer('accepted');
    await h.flush();
    h.calls[2]?.answer('accepted');
    await first;
    h.sessions.push(h.session('B', 2));
    const second = h.manager.reallocate('session_start');
    await h.flush();
    h.calls[3]?.answer('accepted');
    h.calls[4]?.answer('accepted');
    await h.flush();
    expect(sent(h.calls)).toEqual([
      ['B', 4_000],
      ['C', 4_000],
      ['A', 22_000],
      ['A', 15_000],
      ['C', 0],
      ['B', 15_000],
    ]);
    h.calls[5]?.answer('accepted');
    await second;
    expect(h.manager.sessionPower('s-B')).toEqual({ allocatedW: 15_000, waiting: false });
    expect(h.manager.confirmedPowerW('s-A')).toBe(15_000);
    h.manager.close();
  });

  it("lowers the idle connectors' defaults with a lower limit, before any raise, and raises them after", async () => {
    const h = harness(30);
    await h.start();
    h.sessions.push(h.session('A', 1));
    const first = h.manager.reallocate('session_start');
    await h.flush();
    for (const c of h.calls.slice(0, 2)) c.answer('accepted');
    await h.flush();
    h.calls[2]?.answer('accepted');
    await first;
    // A at 22 kW, B and C idle at 4 kW each. The operator lowers the site to 12 kW: a session
    // starting on B or C must not find its 4 kW default next to A's 12 kW.
    h.setLimit(12);
    await h.flush();
    expect(sent(h.calls, 3)).toEqual([
      ['A', 12_000],
      ['B', 0],
      ['C', 0],
    ]);
    for (const c of h.calls.slice(3)) c.answer('accepted');
    await h.manager.settled();
    // The limit back at 30 kW: A goes up first, then the defaults to what A leaves.
    h.setLimit(30);
    await h.flush();
    expect(sent(h.calls, 6)).toEqual([['A', 22_000]]);
    h.calls[6]?.answer('accepted');
    await h.flush();
    expect(sent(h.calls, 7)).toEqual([['B', 4_000]]);
    h.calls[7]?.answer('accepted');
    await h.flush();
    expect(sent(h.calls, 8)).toEqual([['C', 4_000]]);
    h.calls[8]?.answer('accepted');
    await h.manager.settled();
    h.manager.close();
  });

  it('keeps a default lower that was not answered counted at the old default: no raise past it', async () => {
    const h = harness(30);
    await h.start();
    h.setLimit(12);
    await h.flush();
    // No session: each idle connector comes down to its share of 12 kW.
    expect(sent(h.calls)).toEqual([
      ['A', 4_000],
      ['B', 4_000],
      ['C', 4_000],
    ]);
    h.calls[0]?.answer('accepted');
    h.calls[1]?.answer('accepted');
    h.calls[2]?.answer(new ChargerTimeoutError('no answer'));
    await h.manager.settled();
    // C still holds 10 kW: A's session may have 12 - 4 (B) - 10 (C) < its target, so A stays at its 4 kW default.
    h.sessions.push(h.session('A', 1));
    const round = h.manager.reallocate('session_start');
    await h.flush();
    expect(sent(h.calls, 3)).toEqual([
      ['B', 0],
      ['C', 0],
    ]);
    h.calls[3]?.answer('accepted');
    h.calls[4]?.answer(new ChargerTimeoutError('no answer'));
    await round;
    expect(sent(h.calls, 5)).toEqual([]);
    expect(h.manager.sessionPower('s-A')).toEqual({ allocatedW: 4_000, waiting: false });
    h.manager.close();
  });

  it('the driver reads the allowance the charger accepted: waiting while a raise from 0 W is held back', async () => {
    const h = harness(30);
    await h.start();
    h.sessions.push(h.session('A', 1), h.session('B', 2));
    const first = h.manager.reallocate('session_start');
    // C's default comes down to 0 W, then A and B go up to 15 kW each, one after the other.
    for (let i = 0; i < 3; i++) {
      await h.flush();
      h.calls[i]?.answer('accepted');
    }
    await first;
    expect(sent(h.calls)).toEqual([
      ['C', 0],
      ['A', 15_000],
      ['B', 15_000],
    ]);
    expect(h.manager.sessionPower('s-A')).toEqual({ allocatedW: 15_000, waiting: false });
    // C's default is 0 W: a session there is held at 0 until A and B came down.
    h.sessions.push(h.session('C', 3));
    const second = h.manager.reallocate('session_start');
    await h.flush();
    const lowers = h.calls.slice(-2);
    expect(lowers.map((c) => [c.chargerId, c.watts])).toEqual([
      ['A', 10_000],
      ['B', 10_000],
    ]);
    lowers[0]?.answer('accepted');
    lowers[1]?.answer(new ChargerTimeoutError('no answer'));
    await second;
    const c = h.manager.view().sessions.find((s) => s.sessionId === 's-C');
    // Its allocation says 10 kW; the charger was allowed nothing yet, and that is what it reads.
    expect(c).toMatchObject({ allocatedW: 10_000, waiting: false });
    expect(h.manager.sessionPower('s-C')).toEqual({ allocatedW: 0, waiting: true });
    expect(h.manager.sessionPower('s-B')).toEqual({ allocatedW: 15_000, waiting: false });
    h.manager.close();
  });

  it('a charger that reconnects is counted at the profile it may still hold until it accepts a new one', async () => {
    const h = harness(30);
    await h.start();
    h.sessions.push(h.session('A', 1));
    const first = h.manager.reallocate('session_start');
    for (let i = 0; i < 3; i++) {
      await h.flush();
      for (const c of h.calls) c.answer('accepted');
    }
    await first;
    expect(h.manager.confirmedPowerW('s-A')).toBe(22_000);
    // A's link drops and comes back as B starts: A keeps its 22 kW TxProfile (nothing made it
    // forget it) until it accepts its 15 kW share.
    h.sessions.push(h.session('B', 2));
    const before = h.calls.length;
    new PowerListener(h.manager).chargerOnline('A');
    await h.flush();
    // Its connector's default (10 kW, as if all three were busy) goes first.
    expect(sent(h.calls, before)).toEqual([['A', 10_000]]);
    h.calls[before]?.answer('accepted');
    await h.flush();
    await h.flush();
    // Then the round: A's 15 kW is a lower from the 22 kW it may still draw, and A never answers.
    for (let i = 0; i < 4; i++) {
      await h.flush();
      for (const c of h.calls.slice(before + 1))
        c.answer(c.chargerId === 'A' ? new ChargerTimeoutError('no answer') : 'accepted');
    }
    await h.manager.settled();
    expect(sent(h.calls, before + 1)).toContainEqual(['A', 15_000]);
    // B's raise to 15 kW beside A's possible 22 kW would make 37 kW: never sent.
    expect(sent(h.calls, before).filter(([id]) => id === 'B')).toEqual([]);
    h.manager.close();
  });

  it('a charger found drawing past its 0 W profile is not left holding it when power frees', async () => {
    const h = harness(30);
    await h.start();
    h.sessions.push(h.session('A', 1));
    // The site at 0 kW (a generator that failed, say): A is held at 0 W.
    h.setLimit(0);
    await h.flush();
    const round = h.manager.reallocate('session_start');
    for (let i = 0; i < 3; i++) {
      await h.flush();
      for (const c of h.calls) c.answer('accepted');
    }
    await round;
    await h.manager.settled();
    expect(h.manager.confirmedPowerW('s-A')).toBe(0);
    // Two readings above the 0 W profile once its ramp time is over: counted as refusing, at its
    // maximum.
    h.clock.advance(RAMP_MS);
    const events = new PowerListener(h.manager);
    for (const powerW of [5_000, 4_000]) events.meterSample(reading('A', powerW, h.clock.now()));
    await h.flush();
    await h.manager.settled();
    expect(h.manager.view().sessions[0]).toMatchObject({ sessionId: 's-A', refusesProfiles: true });
    const before = h.calls.length;
    // The limit back: A is counted at its 22 kW, and its charger must be allowed that much again.
    h.setLimit(30);
    await h.flush();
    expect(sent(h.calls, before)).toEqual([['A', 22_000]]);
    for (let i = 0; i < 3; i++) {
      for (const c of h.calls) c.answer('accepted');
      await h.flush();
    }
    await h.manager.settled();
    // Then the idle defaults to what its maximum leaves.
    expect(sent(h.calls, before)).toEqual([
      ['A', 22_000],
      ['B', 4_000],
      ['C', 4_000],
    ]);
    expect(h.manager.sessionPower('s-A')).toEqual({ allocatedW: 22_000, waiting: false });
    h.manager.close();
  });
});

/** A live power reading of charger's transaction, measured at `measuredAtMs`, received now. */
function reading(chargerId: string, powerW: number, measuredAtMs: number): MeterSample {
  return {
    chargerId,
    connectorId: '1',
    transactionRef: `tx-${chargerId}`,
    energyWh: 100,
    powerW,
    socPercent: null,
    timestamp: new Date(measuredAtMs).toISOString(),
    receivedAtMs: measuredAtMs,
    time: { stampMs: measuredAtMs, measuredAtMs, epoch: 0 },
    live: true,
  };
}
