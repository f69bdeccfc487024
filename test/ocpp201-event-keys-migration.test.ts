import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrations } from '../src/store/migrations.js';
import { LATEST_ON_EVSE } from '../src/ocpp/v201/transactions.js';
import { databaseAtVersion } from './helpers/old-schema.js';

/**
 * Migration 031 keys 2.0.1 events by their transaction's small key: every transaction and event a
 * schema-30 gateway kept is carried over, in the order it was heard of, and a replayed event still
 * meets its earlier row.
 */
describe('2.0.1 events keyed by their transaction (migration 031)', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('carries every transaction and event over, keys in the order they were first heard of', () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-031-'));
    const path = join(dir, 'gateway.db');
    const old = databaseAtVersion(path, 30);
    const tx = old.prepare(
      `INSERT INTO ocpp201_transactions (charger_id, transaction_id, evse_id, verdict, first_seen_at)
       VALUES (?, ?, 1, 'accepted', ?)`,
    );
    const ev = old.prepare(
      `INSERT INTO ocpp201_transaction_events (charger_id, transaction_id, seq_no, event_type,
         trigger_reason, offline, timestamp, received_at)
       VALUES (?, ?, ?, 'Updated', 'MeterValuePeriodic', ?, ?, ?)`,
    );
    const ids = ['b-0f6c7d2e-1111-4a4a-9e9e-000000000001', 'a-second', 'c-third'];
    ids.forEach((id, i) => {
      const at = `2026-11-0${i + 1}T08:00:00.000Z`;
      tx.run('CP-2', id, at);
      for (let seq = 0; seq < 3 + i; seq += 1) ev.run('CP-2', id, seq, seq % 2, at, at);
    });
    tx.run('CP-3', 'a-second', '2026-11-05T08:00:00.000Z'); // the same id on another charger
    const eventsBefore = old
      .prepare(
        `SELECT charger_id, transaction_id, seq_no, event_type, trigger_reason, offline, timestamp,
           received_at FROM ocpp201_transaction_events ORDER BY 1, 2, 3`,
      )
      .all();
    old.close();

    // Up to 031 only: 032 stores the events in another shape (its own test).
    const db = new Database(path);
    db.pragma('foreign_keys = ON');
    db.exec(migrations[30] as string);
    try {
      expect(
        db
          .prepare(
            'SELECT tx_key, charger_id, transaction_id FROM ocpp201_transactions ORDER BY tx_key',
          )
          .all(),
      ).toEqual([
        { tx_key: 1, charger_id: 'CP-2', transaction_id: ids[0] },
        { tx_key: 2, charger_id: 'CP-2', transaction_id: 'a-second' },
        { tx_key: 3, charger_id: 'CP-2', transaction_id: 'c-third' },
        { tx_key: 4, charger_id: 'CP-3', transaction_id: 'a-second' },
      ]);
      expect(
        db
          .prepare(
            `SELECT charger_id, transaction_id, seq_no, event_type, trigger_reason, offline,
               timestamp, received_at
             FROM ocpp201_transaction_events JOIN ocpp201_transactions USING (tx_key)
             ORDER BY 1, 2, 3`,
          )
          .all(),
      ).toEqual(eventsBefore);
      // The newest transaction on an EVSE is still the last one heard of there.
      expect(db.prepare(LATEST_ON_EVSE).get('CP-2', 1)).toMatchObject({
        transaction_id: 'c-third',
      });
      // One b-tree for the events; a replay meets its earlier row; an event needs its transaction.
      expect(
        db
          .prepare(
            "SELECT count(*) AS n FROM sqlite_schema WHERE tbl_name = 'ocpp201_transaction_events'",
          )
          .get(),
      ).toEqual({ n: 2 }); // the table and the trigger that keeps an open session's events
      const replay = db.prepare(
        `INSERT INTO ocpp201_transaction_events
           (tx_key, seq_no, event_type, trigger_reason, offline, timestamp, received_at)
         VALUES (?, 0, 'Updated', 'MeterValuePeriodic', 0, 'x', 'x') ON CONFLICT DO NOTHING`,
      );
      expect(replay.run(1).changes).toBe(0);
      expect(() => replay.run(99)).toThrow(/FOREIGN KEY/);
      expect(db.pragma('foreign_key_check')).toEqual([]);
    } finally {
      db.close();
    }
  });
});
