import { describe, expect, it } from 'vitest';
import { ConfigLimits } from '../src/load/limits.js';
import {
  LoadManager,
  type ActiveSession,
  type ManagedConnector,
} from '../src/load/load-manager.js';
import { ChargerTimeoutError, type PowerLimit, type StepOutcome } from '../src/ocpp/port.js';
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
  const limits = new ConfigLimits({
    limitKw,
    phases: 3,
    voltage: 230,
    policy: 'equal',
    circuits: [],
  } as never);
  const manager = new LoadManager({
    log: createLogger('silent'),
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
  return { calls, sessions, manager, session, flush, start };
}

describe('load manager ordering', () => {
  it('sends no raise while a lower is unanswered, and none after it timed out', async () => {
    const h = harness(30);
    await h.start();
    h.sessions.push(h.session('A', 1));
    const first = h.manager.reallocate('session_start');
    await h.flush();
    expect(h.calls.map((c) => [c.chargerId, c.watts])).toEqual([['A', 22_000]]);
    h.calls[0]?.answer('accepted');
    await first;

    h.sessions.push(h.session('B', 2));
    const second = h.manager.reallocate('session_start');
    await h.flush();
    // A must come down to 15 kW before B may go up: only the lower is out.
    expect(h.calls.slice(1).map((c) => [c.chargerId, c.watts])).toEqual([['A', 15_000]]);
    h.calls[1]?.answer(new ChargerTimeoutError('no answer'));
    await second;
    // A still counts at its old 22 kW: B's raise to 15 kW would make 37 kW, so it never went out.
    expect(h.calls.slice(1).filter((c) => c.chargerId === 'B' && c.watts === 15_000)).toEqual([]);
    expect(h.manager.view().nodes[0]).toMatchObject({ nodeId: 'site', watts: 30_000 });
    h.manager.close();
  });

  it('raises once every lower was accepted', async () => {
    const h = harness(30);
    await h.start();
    h.sessions.push(h.session('A', 1));
    const first = h.manager.reallocate('session_start');
    await h.flush();
    h.calls[0]?.answer('accepted');
    await first;
    h.sessions.push(h.session('B', 2));
    const second = h.manager.reallocate('session_start');
    await h.flush();
    h.calls[1]?.answer('accepted');
    await h.flush();
    expect(h.calls.map((c) => [c.chargerId, c.watts])).toEqual([
      ['A', 22_000],
      ['A', 15_000],
      ['B', 15_000],
    ]);
    h.calls[2]?.answer('accepted');
    await second;
    expect(h.manager.sessionPower('s-B')).toEqual({ allocatedW: 15_000, waiting: false });
    expect(h.manager.confirmedPowerW('s-A')).toBe(15_000);
    h.manager.close();
  });
});
