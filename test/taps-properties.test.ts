import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DRIVERS } from './helpers/gateway.js';
import { RAW_PROTOCOLS, type RawStation, type StationTx } from './helpers/raw-stations.js';
import { hoursAgo } from './helpers/session-harness.js';
import { TAP, TAP_MINIMUM, tapSite } from './helpers/tap-site.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The balance rules over generated sequences of taps (online and offline), top-ups, meter samples
 * and stops at a raw-frame charger with two connectors, on the gateway's real SQLite file: after
 * every step each balance is the sum of its ledger and never below zero (verifyLedger), an accepted
 * tap debited min(tap amount, balance) once, a refused one moved nothing, and once every
 * transaction has ended every debit has exactly one outcome.
 */

const site = tapSite();
const { h, bindAll, balance, tapSessions, ledgerClean, tap, booted } = site;

const TOKENS = [
  { value: '04a23b1c5d6e70', driverId: DRIVERS.ada.id },
  { value: 'BOLA-CARD-1', driverId: DRIVERS.bola.id },
  { value: 'OTHER-CARD-1', driverId: DRIVERS.other.id },
] as const;
const WALLETS = [DRIVERS.ada.id, DRIVERS.bola.id, DRIVERS.other.id];

type Step =
  | { kind: 'tap'; token: number; connector: 1 | 2; offline: boolean }
  | { kind: 'top_up'; wallet: number; amount: number }
  | { kind: 'sample'; connector: 1 | 2; wh: number }
  | { kind: 'stop'; connector: 1 | 2 };

const connector = fc.constantFrom<1 | 2>(1, 2);
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('tap' as const),
    token: fc.nat({ max: TOKENS.length - 1 }),
    connector,
    offline: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('top_up' as const),
    wallet: fc.nat({ max: WALLETS.length - 1 }),
    amount: fc.integer({ min: 1, max: 3_000 }),
  }),
  fc.record({
    kind: fc.constant('sample' as const),
    connector,
    wh: fc.integer({ min: 0, max: 4_000 }),
  }),
  fc.record({ kind: fc.constant('stop' as const), connector }),
);

interface Open {
  tx: StationTx;
  registerWh: number;
  sessionId: string | null;
}

let references = 0;

async function run(station: RawStation, steps: Step[]): Promise<void> {
  const open = new Map<number, Open>();
  const end = async (c: number) => {
    const o = open.get(c);
    if (!o) return;
    open.delete(c);
    await station.send(station.end(o.tx, o.registerWh));
    const id = o.sessionId;
    if (id) await waitUntil(() => h.session(id).state === 'settled', 5000, 'settlement');
  };
  try {
    for (const s of steps) {
      switch (s.kind) {
        case 'tap': {
          // A charger starts no second transaction on a connector in use.
          if (open.has(s.connector)) break;
          const token = TOKENS[s.token]!;
          const before = balance(token.driverId);
          const known = new Set(tapSessions().map((r) => r.id));
          const stamp = s.offline ? { timestamp: hoursAgo(1), offline: true } : {};
          const { tx, status } = await tap(station, token.value, s.connector, 10_000, stamp);
          const opened = tapSessions().filter((r) => !known.has(r.id));
          if (status === 'Accepted') {
            expect(opened).toHaveLength(1);
            expect(opened[0]!.amount).toBe(Math.min(TAP, before));
            expect(balance(token.driverId)).toBe(before - opened[0]!.amount);
            // Online, a tap below the minimum is refused before anything is debited.
            if (opened[0]!.started_offline === 0)
              expect(before).toBeGreaterThanOrEqual(TAP_MINIMUM);
          } else {
            expect(opened).toHaveLength(0);
            expect(balance(token.driverId)).toBe(before);
          }
          open.set(s.connector, { tx, registerWh: 10_000, sessionId: opened[0]?.id ?? null });
          if (status !== 'Accepted') await end(s.connector);
          break;
        }
        case 'top_up': {
          const driverId = WALLETS[s.wallet]!;
          const before = balance(driverId);
          references += 1;
          site
            .wallet()
            .credit(driverId, 'top_up', s.amount, `prop-${references}-${Date.now()}`, hoursAgo(0));
          expect(balance(driverId)).toBe(before + s.amount);
          break;
        }
        case 'sample': {
          const o = open.get(s.connector);
          if (!o) break;
          o.registerWh += s.wh;
          await station.send(station.sample(o.tx, o.registerWh));
          break;
        }
        case 'stop':
          await end(s.connector);
          break;
      }
      ledgerClean();
    }
  } finally {
    for (const c of [...open.keys()]) await end(c);
  }
  // Every debit has its one outcome: nothing is left open.
  expect(tapSessions().filter((r) => r.state !== 'settled' && r.state !== 'refunded')).toEqual([]);
  ledgerClean();
}

describe.each(RAW_PROTOCOLS)('tap balance rules: $name', (protocol) => {
  it('property: sum of ledger = balance, never below zero, every debit one outcome', async () => {
    bindAll();
    const station = await booted(protocol);
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), (steps) =>
        run(station, steps),
      ),
      { numRuns: 12, seed: 20261206 },
    );
  });
});
