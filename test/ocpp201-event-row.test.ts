import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  EVENT_TYPES,
  EVENTS_OF_TRANSACTION,
  TRIGGER_REASONS,
  eventColumns,
  eventOfRow,
  type EventRow,
} from '../src/ocpp/v201/event-row.js';
import type { TransactionEventReq } from '../src/ocpp/v201/messages.js';
import { Transactions201 } from '../src/ocpp/v201/transactions.js';
import { openDatabase, type Db } from '../src/store/database.js';
import { migrations } from '../src/store/migrations.js';
import { databaseAtVersion } from './helpers/old-schema.js';

/**
 * 2.0.1 events in a compact row (migration 032, src/ocpp/v201/event-row.ts): the code tables never
 * change meaning, every row a schema-31 gateway kept reads back as it was, whatever a charger
 * sent is kept, and a repeat is the same instant however it was spelled.
 */

/** Pinned: a code is never reused. Append only. */
const PINNED_TRIGGERS = [
  'Authorized',
  'CablePluggedIn',
  'ChargingRateChanged',
  'ChargingStateChanged',
  'Deauthorized',
  'EnergyLimitReached',
  'EVCommunicationLost',
  'EVConnectTimeout',
  'MeterValueClock',
  'MeterValuePeriodic',
  'TimeLimitReached',
  'Trigger',
  'UnlockCommand',
  'StopAuthorized',
  'EVDeparted',
  'EVDetected',
  'RemoteStop',
  'RemoteStart',
  'AbnormalCondition',
  'SignedDataReceived',
  'ResetCommand',
  'CostLimitReached',
  'LimitSet',
  'OperationModeChanged',
  'RunningCost',
  'SoCLimitReached',
  'TariffChanged',
  'TariffNotAccepted',
  'TxResumed',
];

/** Spellings a charger (or a gateway before the edge rewrote timestamps) may have left. */
const ODD_TIMES = [
  '2026-11-01T08:00:00Z',
  '2026-11-01T09:00:00+01:00',
  '2026-11-01T08:00:00.123456Z',
  '2026-11-01 08:00:00',
  'not a time',
  '',
];

function schemaEnum(file: string, name: string): string[] {
  const path = createRequire(import.meta.url).resolve(`ocpp-rpc/lib/schemas/${file}.json`);
  let found: string[] = [];
  const walk = (o: unknown): void => {
    if (!o || typeof o !== 'object') return;
    for (const [k, v] of Object.entries(o)) {
      if (k === name && Array.isArray((v as { enum?: unknown }).enum)) {
        found = (v as { enum: string[] }).enum;
      }
      walk(v);
    }
  };
  walk(JSON.parse(readFileSync(path, 'utf8')));
  return found;
}

const INSERT = `INSERT INTO ocpp201_transaction_events (tx_key, seq_no, type_code, trigger_code,
    trigger_text, offline, timestamp_ms, timestamp_text, received_at_ms)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-032-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function newTransaction(db: Db, id: string): number {
  return Number(
    db
      .prepare(
        `INSERT INTO ocpp201_transactions (charger_id, transaction_id, first_seen_at)
         VALUES ('CP-1', ?, '2026-11-01T08:00:00.000Z')`,
      )
      .run(id).lastInsertRowid,
  );
}

/** As the operator's session view reads them: within the transaction's span (migration 034). */
function eventsOf(db: Db, key: number) {
  const span = db
    .prepare(
      'SELECT first_event_id AS f, last_event_id AS l FROM ocpp201_transactions WHERE tx_key = ?',
    )
    .get(key) as { f: number; l: number | null };
  return (db.prepare(EVENTS_OF_TRANSACTION).all(span.f, span.l, key) as EventRow[]).map(eventOfRow);
}

describe('2.0.1 event rows: code tables', () => {
  it('never change meaning, and hold every trigger reason of 2.0.1 and 2.1', () => {
    expect(EVENT_TYPES).toEqual(['Started', 'Updated', 'Ended']);
    expect(TRIGGER_REASONS).toEqual(PINNED_TRIGGERS);
    for (const file of ['ocpp2_0_1', 'ocpp2_1']) {
      const reasons = schemaEnum(file, 'TriggerReasonEnumType');
      expect(reasons.length).toBeGreaterThan(20);
      expect(reasons.filter((r) => !TRIGGER_REASONS.includes(r))).toEqual([]);
      expect(new Set(schemaEnum(file, 'TransactionEventEnumType'))).toEqual(new Set(EVENT_TYPES));
    }
  });

  it('the schema takes every code and refuses what is out of range or ambiguous', () => {
    const db = openDatabase(join(dir, 'gateway.db'));
    try {
      const key = newTransaction(db, 'tx-1');
      const insert = db.prepare(INSERT);
      const ms = Date.parse('2026-11-01T08:00:00.000Z');
      TRIGGER_REASONS.forEach((_, code) =>
        insert.run(key, code, code % 3, code, null, 0, ms, null, ms),
      );
      expect(eventsOf(db, key).map((e) => e.triggerReason)).toEqual(TRIGGER_REASONS);
      const refused: unknown[][] = [
        [3, 9, null, 0, ms, null, ms], // type past Ended
        [1, TRIGGER_REASONS.length, null, 0, ms, null, ms], // trigger past the table
        [1, 9, 'MeterValuePeriodic', 0, ms, null, ms], // both a code and a text
        [1, null, null, 0, ms, null, ms], // neither
        [1, 9, null, 2, ms, null, ms], // offline not 0/1
        [1, 9, null, 0, null, null, ms], // no time at all
        [1, 9, null, 0, ms, null, null], // no received time
        [1, 9, null, 0, '2026-11-01', null, ms], // STRICT: text where ms are due
      ];
      for (const [i, cols] of refused.entries()) {
        expect(() => insert.run(key, 1000 + i, ...cols), JSON.stringify(cols)).toThrow(
          /constraint|cannot store/i,
        );
      }
    } finally {
      db.close();
    }
  });
});

describe('2.0.1 event rows: kept as they came', () => {
  it('whatever the trigger text and timestamp, an event reads back as it was recorded', () => {
    const db = openDatabase(join(dir, 'gateway.db'));
    try {
      const key = newTransaction(db, 'tx-any');
      const insert = db.prepare(INSERT);
      let seq = 0;
      const isoTime = fc
        .integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 })
        .map((ms) => new Date(ms).toISOString());
      fc.assert(
        fc.property(
          fc.constantFrom(...EVENT_TYPES),
          fc.oneof(fc.constantFrom(...TRIGGER_REASONS), fc.string()),
          fc.boolean(),
          fc.oneof(isoTime, fc.constantFrom(...ODD_TIMES), fc.string()),
          fc.integer({ min: 0, max: 253_402_300_799_999 }),
          (eventType, triggerReason, offline, timestamp, receivedAtMs) => {
            seq += 1;
            insert.run(
              key,
              seq,
              ...eventColumns(eventType, triggerReason, offline, timestamp, receivedAtMs),
            );
            const back = eventsOf(db, key).at(-1);
            expect(back).toEqual({
              seqNo: seq,
              eventType,
              triggerReason,
              offline,
              timestamp,
              receivedAt: new Date(receivedAtMs).toISOString(),
            });
          },
        ),
        { numRuns: 500 },
      );
    } finally {
      db.close();
    }
  });

  it('a canonical event keeps no text at all: ms and codes only', () => {
    const at = '2026-11-01T08:00:00.250Z';
    expect(eventColumns('Updated', 'MeterValuePeriodic', false, at, Date.parse(at))).toEqual([
      1,
      9,
      null,
      0,
      Date.parse(at),
      null,
      Date.parse(at),
    ]);
    expect(eventColumns('Ended', 'Vendor thing', true, 'not a time', 0)).toEqual([
      2,
      null,
      'Vendor thing',
      1,
      null,
      'not a time',
      0,
    ]);
  });
});

describe('2.0.1 event rows: migration 032', () => {
  it('carries every event a schema-31 gateway kept over, reading back identical', () => {
    const path = join(dir, 'gateway.db');
    const old = databaseAtVersion(path, 31);
    const tx = old.prepare(
      `INSERT INTO ocpp201_transactions (charger_id, transaction_id, first_seen_at)
       VALUES ('CP-2', ?, '2026-11-01T08:00:00.000Z')`,
    );
    const ev = old.prepare(
      `INSERT INTO ocpp201_transaction_events (tx_key, seq_no, event_type, trigger_reason, offline,
         timestamp, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    const keys = [1, 2, 3].map((i) => Number(tx.run(`tx-${i}`).lastInsertRowid));
    const triggers = [...TRIGGER_REASONS, 'VendorSpecific', 'metervalueperiodic', ''];
    const times = [
      '2026-11-01T08:00:00.000Z',
      '1969-07-20T20:17:40.123Z',
      '9999-12-31T23:59:59.999Z',
      ...ODD_TIMES,
    ];
    let n = 0;
    for (const key of keys) {
      for (const trigger of triggers) {
        const at = times[n % times.length] as string;
        const received = new Date(Date.parse('2026-11-01T08:00:00.000Z') + n * 1_001).toISOString();
        ev.run(key, n, EVENT_TYPES[n % 3], trigger, n % 2, at, received);
        n += 1;
      }
    }
    const before = old
      .prepare(
        `SELECT tx_key, seq_no AS seqNo, event_type AS eventType, trigger_reason AS triggerReason,
           offline, timestamp, received_at AS receivedAt
         FROM ocpp201_transaction_events ORDER BY tx_key, seq_no`,
      )
      .all() as ({ tx_key: number; offline: number | boolean } & Record<string, unknown>)[];
    old.close();
    expect(before).toHaveLength(n);

    const db = openDatabase(path);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(migrations.length);
      const after = keys.flatMap((key) =>
        eventsOf(db, key).map((e) => ({ tx_key: key, ...e, offline: e.offline ? 1 : 0 })),
      );
      expect(after).toEqual(before);
      // Only what the codes and ms cannot spell is kept as text.
      const texts = db
        .prepare(
          `SELECT count(trigger_text) AS triggers, count(timestamp_text) AS times
           FROM ocpp201_transaction_events`,
        )
        .get() as { triggers: number; times: number };
      expect(texts.triggers).toBe(3 * 3);
      expect(texts.times).toBe(
        before.filter((e) => ODD_TIMES.includes(e.timestamp as string)).length,
      );
      // The table, its trigger that keeps an open session's events, and nothing else.
      expect(
        db
          .prepare(
            "SELECT type, name FROM sqlite_schema WHERE tbl_name LIKE 'ocpp201_transaction_events%' ORDER BY 1",
          )
          .all(),
      ).toEqual([
        { type: 'table', name: 'ocpp201_transaction_events' },
        { type: 'trigger', name: 'ocpp201_transaction_events_kept_while_open' },
      ]);
      expect(db.pragma('foreign_key_check')).toEqual([]);
    } finally {
      db.close();
    }
  });
});

describe('2.0.1 event rows: a repeat is the same event at the same instant', () => {
  const req = (eventType: 'Started' | 'Updated', timestamp: string): TransactionEventReq => ({
    eventType,
    timestamp,
    triggerReason: 'MeterValuePeriodic',
    seqNo: 4,
    transactionInfo: { transactionId: 'tx-r' },
  });

  it('compares instants, not spellings; text only where a time does not parse', () => {
    const db = openDatabase(join(dir, 'gateway.db'));
    try {
      const txs = Transactions201.of(db);
      const seen = (r: TransactionEventReq) => txs.see('CP-1', r, '2026-11-01T08:00:05.000Z').seen;
      const key = txs.open('CP-1', 'tx-r', '2026-11-01T08:00:00.000Z');
      // A row a gateway kept before the edge rewrote timestamps: its own spelling of the instant.
      db.prepare(INSERT).run(
        key,
        4,
        ...eventColumns('Updated', 'MeterValuePeriodic', false, '2026-11-01T09:00:00+01:00', 0),
      );
      expect(seen(req('Updated', '2026-11-01T08:00:00.000Z'))).toBe('repeat');
      expect(seen(req('Updated', '2026-11-01T08:00:00Z'))).toBe('repeat');
      expect(seen(req('Updated', '2026-11-01T08:00:00.001Z'))).toBe('reused_seq_no');
      expect(seen(req('Started', '2026-11-01T08:00:00.000Z'))).toBe('reused_seq_no');
      expect(seen(req('Updated', 'garbled'))).toBe('reused_seq_no');

      db.prepare('UPDATE ocpp201_transaction_events SET seq_no = 5 WHERE seq_no = 4').run();
      const garbled = { ...req('Updated', 'garbled'), seqNo: 6 };
      expect(seen(garbled)).toBe('new');
      expect(seen(garbled)).toBe('repeat');
      expect(seen({ ...garbled, timestamp: 'garbled too' })).toBe('reused_seq_no');
      // Recorded once each, as they came.
      expect(eventsOf(db, key).map((e) => [e.seqNo, e.timestamp])).toEqual([
        [5, '2026-11-01T09:00:00+01:00'],
        [6, 'garbled'],
      ]);
    } finally {
      db.close();
    }
  });
});
