import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS_OF_TRANSACTION, eventOfRow, type EventRow } from '../src/ocpp/v201/event-row.js';
import type { TransactionEventReq, TransactionEventType } from '../src/ocpp/v201/messages.js';
import { Transactions201, type EventSeen } from '../src/ocpp/v201/transactions.js';
import { openDatabase, type Db } from '../src/store/database.js';

/**
 * The replay check over events kept in arrival order (migration 034): whatever order a charger
 * sends its events in, repeats them, reuses a seqNo, or the gateway restarts or rolls a batch
 * back between them, each event is judged as if every earlier one were looked up by
 * (transaction, seqNo): new the first time, a repeat when the same type at the same instant
 * comes again, a reused seqNo otherwise; and each (transaction, seqNo) is stored once, the first.
 */

const TYPES: TransactionEventType[] = ['Started', 'Updated', 'Ended'];
const INSTANTS = ['2026-11-01T08:00:00.000Z', '2026-11-01T08:00:10.000Z', '2026-11-01T08:00:20Z'];
const RECEIVED = '2026-11-01T09:00:00.000Z';

type Step =
  | { kind: 'event'; tx: number; seqNo: number; type: number; at: number }
  | { kind: 'restart' }
  | { kind: 'rolled back'; tx: number; seqNo: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('event' as const),
      tx: fc.integer({ min: 0, max: 2 }),
      seqNo: fc.integer({ min: 0, max: 6 }),
      type: fc.integer({ min: 0, max: 2 }),
      at: fc.integer({ min: 0, max: 2 }),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'restart' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('rolled back' as const),
      tx: fc.integer({ min: 0, max: 2 }),
      seqNo: fc.integer({ min: 0, max: 8 }),
    }),
  },
);

const req = (transactionId: string, seqNo: number, type: number, at: number) =>
  ({
    eventType: TYPES[type],
    timestamp: INSTANTS[at],
    triggerReason: 'MeterValuePeriodic',
    seqNo,
    transactionInfo: { transactionId },
  }) as TransactionEventReq;

/** The same instant, however spelled: INSTANTS[2] is spelled otherwise when read back. */
const instant = (at: number) => Date.parse(INSTANTS[at] as string);

let dir: string;
let path: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-replay-'));
  path = join(dir, 'gateway.db');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function eventsOf(db: Db, chargerId: string, transactionId: string) {
  const t = db
    .prepare(
      `SELECT tx_key AS k, first_event_id AS f, last_event_id AS l FROM ocpp201_transactions
       WHERE charger_id = ? AND transaction_id = ?`,
    )
    .get(chargerId, transactionId) as { k: number; f: number; l: number | null } | undefined;
  if (!t) return [];
  return (db.prepare(EVENTS_OF_TRANSACTION).all(t.f, t.l, t.k) as EventRow[]).map(eventOfRow);
}

describe('2.0.1 replay check over events in arrival order', () => {
  it('judges every event as a lookup by (transaction, seqNo) would, across restarts and rollbacks', () => {
    let run = 0;
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
        run += 1;
        const chargerId = `CP-${run}`;
        const txId = (tx: number) => `tx-${tx}`;
        const model = new Map<string, { type: number; ms: number }>();
        let db = openDatabase(path);
        try {
          for (const s of steps) {
            if (s.kind === 'restart') {
              db.close();
              db = openDatabase(path);
              continue;
            }
            const txs = Transactions201.of(db);
            if (s.kind === 'rolled back') {
              // A batch that failed after its event was seen: nothing of it stays.
              expect(() =>
                db.transaction(() => {
                  txs.see(chargerId, req(txId(s.tx), s.seqNo, 1, 0), RECEIVED);
                  throw new Error('the batch failed');
                })(),
              ).toThrow('the batch failed');
              continue;
            }
            const key = `${s.tx}/${s.seqNo}`;
            const earlier = model.get(key);
            const expected: EventSeen =
              earlier === undefined
                ? 'new'
                : earlier.type === s.type && earlier.ms === instant(s.at)
                  ? 'repeat'
                  : 'reused_seq_no';
            if (earlier === undefined) model.set(key, { type: s.type, ms: instant(s.at) });
            const seen = db.transaction(
              () => txs.see(chargerId, req(txId(s.tx), s.seqNo, s.type, s.at), RECEIVED).seen,
            )();
            expect(seen).toBe(expected);
          }
          for (const tx of [0, 1, 2]) {
            const stored = eventsOf(db, chargerId, txId(tx)).map((e) => [
              e.seqNo,
              e.eventType,
              Date.parse(e.timestamp),
            ]);
            const kept = [...model]
              .filter(([k]) => k.startsWith(`${tx}/`))
              .map(([k, v]) => [Number(k.split('/')[1]), TYPES[v.type], v.ms])
              .sort((a, b) => (a[0] as number) - (b[0] as number));
            expect(stored).toEqual(kept);
          }
        } finally {
          db.close();
        }
      }),
      { numRuns: 300 },
    );
  });

  it('after a restart, knows a seqNo above the last-arrived one that came before it', () => {
    let db = openDatabase(path);
    try {
      const see = (seqNo: number) =>
        Transactions201.of(db).see('CP-late', req('tx-late', seqNo, 1, 0), RECEIVED).seen;
      expect([see(5), see(0)]).toEqual(['new', 'new']); // 0 came late, out of order
      db.close();
      db = openDatabase(path);
      expect([see(5), see(0), see(6)]).toEqual(['repeat', 'repeat', 'new']);
    } finally {
      db.close();
    }
  });

  it('finds a repeat of a transaction heard before a restart, and of one already ended', () => {
    let db = openDatabase(path);
    try {
      const see = (seqNo: number, type: number) =>
        Transactions201.of(db).see('CP-fixed', req('tx-fixed', seqNo, type, 0), RECEIVED).seen;
      // Another transaction's events after it, so its span is not the table's end.
      const other = (seqNo: number) =>
        Transactions201.of(db).see('CP-other', req('tx-other', seqNo, 1, 0), RECEIVED).seen;
      expect([see(0, 0), see(1, 1), other(0), see(2, 1)]).toEqual(['new', 'new', 'new', 'new']);
      db.close();
      db = openDatabase(path); // the gateway restarts; the charger replays its queue
      expect([see(1, 1), see(2, 1), see(3, 2), other(1)]).toEqual([
        'repeat',
        'repeat',
        'new',
        'new',
      ]);
      Transactions201.of(db).end('CP-fixed', 'tx-fixed', RECEIVED, 100, 'Local');
      db.close();
      db = openDatabase(path);
      expect([see(3, 2), see(0, 0), see(4, 1), see(4, 1), other(2)]).toEqual([
        'repeat',
        'repeat',
        'new',
        'repeat',
        'new',
      ]);
      expect(eventsOf(db, 'CP-fixed', 'tx-fixed').map((e) => e.seqNo)).toEqual([0, 1, 2, 3, 4]);
    } finally {
      db.close();
    }
  });
});
