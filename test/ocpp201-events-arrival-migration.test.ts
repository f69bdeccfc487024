import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventColumns } from '../src/ocpp/v201/event-row.js';
import type { TransactionEventReq } from '../src/ocpp/v201/messages.js';
import { Transactions201 } from '../src/ocpp/v201/transactions.js';
import { openDatabase } from '../src/store/database.js';
import { migrations } from '../src/store/migrations.js';
import { databaseAtVersion } from './helpers/old-schema.js';

/**
 * Migration 034 keeps 2.0.1 events in arrival order: every event a schema-33 gateway kept is
 * carried over in the order it was received, each transaction gets the span of ids its events
 * lie in, and a replayed event still meets its earlier row.
 */
describe('2.0.1 events in arrival order (migration 034)', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('carries every event over in received order, with each transaction’s span', () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-034-'));
    const path = join(dir, 'gateway.db');
    const old = databaseAtVersion(path, 33);
    const tx = (id: string, ended: boolean) =>
      Number(
        old
          .prepare(
            `INSERT INTO ocpp201_transactions (charger_id, transaction_id, first_seen_at, ended_at)
             VALUES ('CP-1', ?, '2026-11-01T08:00:00.000Z', ?)`,
          )
          .run(id, ended ? '2026-11-01T09:00:00.000Z' : null).lastInsertRowid,
      );
    const ev = old.prepare(
      `INSERT INTO ocpp201_transaction_events (tx_key, seq_no, type_code, trigger_code,
         trigger_text, offline, timestamp_ms, timestamp_text, received_at_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const T = Date.parse('2026-11-01T08:00:00.000Z');
    const event = (key: number, seq: number, receivedS: number) =>
      ev.run(
        key,
        seq,
        ...eventColumns(
          'Updated',
          'MeterValuePeriodic',
          false,
          new Date(T).toISOString(),
          T + receivedS * 1000,
        ),
      );
    const ended = tx('tx-ended', true);
    const open = tx('tx-open', false);
    tx('tx-quiet', false); // heard of, no event kept
    // Interleaved as two transactions running side by side are; keyed, they were apart.
    event(ended, 0, 1);
    event(open, 0, 2);
    event(ended, 1, 3);
    event(open, 2, 4); // its seqNo 1 came late
    event(ended, 2, 5);
    event(open, 1, 6);
    tx('tx-ended-quiet', true); // ended, no event kept
    old.close();

    const db = openDatabase(path);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(migrations.length);
      expect(
        db
          .prepare('SELECT event_id, tx_key, seq_no FROM ocpp201_transaction_events ORDER BY 1')
          .all()
          .map((r) => Object.values(r as object)),
      ).toEqual([
        [1, ended, 0],
        [2, open, 0],
        [3, ended, 1],
        [4, open, 2],
        [5, ended, 2],
        [6, open, 1],
      ]);
      expect(
        db
          .prepare(
            'SELECT transaction_id, first_event_id, last_event_id, seq_no_above FROM ocpp201_transactions ORDER BY tx_key',
          )
          .all()
          .map((r) => Object.values(r as object)),
      ).toEqual([
        // tx-open's highest seqNo (2) is not its last-arrived event's (1)
        ['tx-ended', 1, 5, 2],
        ['tx-open', 2, null, 2],
        ['tx-quiet', 7, null, null],
        ['tx-ended-quiet', 7, 6, null],
      ]);
      // No index is written with an event: the table and the trigger that keeps an open
      // session's events, nothing else.
      expect(
        db
          .prepare(
            "SELECT type, name FROM sqlite_schema WHERE tbl_name = 'ocpp201_transaction_events' ORDER BY 1",
          )
          .all(),
      ).toEqual([
        { type: 'table', name: 'ocpp201_transaction_events' },
        { type: 'trigger', name: 'ocpp201_transaction_events_kept_while_open' },
      ]);
      expect(db.pragma('foreign_key_check')).toEqual([]);

      // The charger replays its queue after the upgrade: each kept event is met again.
      const txs = Transactions201.of(db);
      const replay = (transactionId: string, seqNo: number) =>
        txs.see(
          'CP-1',
          {
            eventType: 'Updated',
            timestamp: new Date(T).toISOString(),
            triggerReason: 'MeterValuePeriodic',
            seqNo,
            transactionInfo: { transactionId },
          } as TransactionEventReq,
          '2026-11-01T10:00:00.000Z',
        ).seen;
      expect([
        replay('tx-ended', 1),
        replay('tx-open', 2),
        replay('tx-open', 1),
        replay('tx-open', 3),
      ]).toEqual(['repeat', 'repeat', 'repeat', 'new']);
      expect([replay('tx-quiet', 0), replay('tx-ended-quiet', 0), replay('tx-ended', 3)]).toEqual([
        'new',
        'new',
        'new',
      ]);
      // Late events of an ended transaction move its span's close over them.
      expect(
        db
          .prepare(
            "SELECT last_event_id FROM ocpp201_transactions WHERE transaction_id LIKE 'tx-ended%' ORDER BY tx_key",
          )
          .all(),
      ).toEqual([{ last_event_id: 10 }, { last_event_id: 9 }]);
    } finally {
      db.close();
    }
  });
});
