import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AlertStore } from '../src/alerts/alert-store.js';
import { applySeed } from '../src/cli/offline/seed.js';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { SessionStore } from '../src/charging/session-store.js';
import { parseConfig } from '../src/config/read-config.js';
import { eventColumns } from '../src/ocpp/v201/event-row.js';
import { createLogger } from '../src/shared/log.js';
import { openDatabase, type Db } from '../src/store/database.js';
import { Outbox } from '../src/store/outbox.js';
import {
  PRUNE_TRANSACTION_EVENTS,
  Retention,
  type RetentionWindows,
} from '../src/store/retention.js';
import { outboxHealthOf, StorageHealth } from '../src/store/storage-health.js';
import { Wallet } from '../src/wallet/wallet.js';
import { DRIVERS, testConfig, testSeed } from './helpers/gateway.js';

const DAY = 86_400_000;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

let dir: string;
let db: Db;
let now: number;
const lines: string[] = [];
const log = createLogger(
  'info',
  new Writable({ write: (c: Buffer, _e, d) => (lines.push(c.toString()), d()) }),
);
const windows: RetentionWindows = {
  ocppEventsDays: 90,
  transactionEventsDays: 90,
  idempotencyKeysDays: 30,
  uplinkCommandsDays: 30,
  alertsDays: 365,
  alertDeliveriesDays: 90,
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-retention-'));
  db = openDatabase(join(dir, 'g.db'));
  applySeed(db, testSeed, iso(T0));
  now = T0;
  lines.length = 0;
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function retention(batchRows = 1000): Retention {
  return new Retention({
    db,
    clock: { now: () => now },
    log,
    windows,
    batchRows,
    intervalMs: 60_000,
  });
}

const count = (table: string) =>
  (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

/** An Updated MeterValuePeriodic event received at `at`, in the compact row (migration 032). */
function insertEvent(txKey: number, seq: number, at: number): void {
  db.prepare(
    `INSERT INTO ocpp201_transaction_events (tx_key, seq_no, type_code, trigger_code, trigger_text,
       offline, timestamp_ms, timestamp_text, received_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(txKey, seq, ...eventColumns('Updated', 'MeterValuePeriodic', false, iso(at), at));
}

/** A session of Ada's on a 2.0.1 charger's transaction, with its key and its events. */
function session(id: string, at: number, outcome: 'open' | 'refunded'): void {
  const sessions = new SessionStore(db);
  const wallet = new Wallet(db, new Outbox(db));
  db.transaction(() => {
    sessions.insert({
      id,
      driverId: DRIVERS.ada.id,
      chargerId: 'CP-201',
      connectorId: id, // one open session per connector
      amount: 100,
      microNgnPerWh: 412_500,
      limitWh: 242,
      idToken: `tok-${id}`,
      createdAt: iso(at),
    });
    wallet.debitSession(DRIVERS.ada.id, id, 100, iso(at));
    db.prepare(
      'INSERT INTO idempotency_keys (driver_id, key, request_hash, session_id, created_at) VALUES (?, ?, ?, ?, ?)',
    ).run(DRIVERS.ada.id, `key-${id}`, 'a'.repeat(64), id, iso(at));
    const txKey = db
      .prepare(
        'INSERT INTO ocpp201_transactions (charger_id, transaction_id, first_seen_at) VALUES (?, ?, ?)',
      )
      .run('CP-201', `tx-${id}`, iso(at)).lastInsertRowid;
    for (let seq = 0; seq < 3; seq++) {
      insertEvent(Number(txKey), seq, at);
    }
    db.prepare("UPDATE sessions SET state = 'charging', transaction_ref = ? WHERE id = ?").run(
      `tx-${id}`,
      id,
    );
    if (outcome === 'refunded') {
      wallet.refundSession(DRIVERS.ada.id, id, iso(at + 60_000));
      db.prepare("UPDATE sessions SET state = 'refunded', ended_at = ? WHERE id = ?").run(
        iso(at + 60_000),
        id,
      );
    }
  })();
}

function ocppEvents(n: number, at: number): void {
  const insert = db.prepare(
    "INSERT INTO ocpp_events (charger_id, action, note, at) VALUES ('CP-1', 'Heartbeat', 'odd', ?)",
  );
  db.transaction(() => {
    for (let i = 0; i < n; i++) insert.run(iso(at + i));
  })();
}

describe('retention', () => {
  it('prunes past each window in bounded batches and never touches money rows or what an open session needs', async () => {
    session('s-old-done', T0, 'refunded');
    session('s-old-open', T0, 'open'); // a charger silent for months: still open
    ocppEvents(25, T0);
    db.prepare(
      "INSERT INTO uplink_commands (id, type, result, applied_at) VALUES ('cmd-old', 'top_up', '{}', ?)",
    ).run(iso(T0));

    now = T0 + 20 * DAY; // inside every window: nothing goes
    expect(await retention(10).pruneAll()).toEqual({
      ocppEventsDays: 0,
      transactionEventsDays: 0,
      idempotencyKeysDays: 0,
      uplinkCommandsDays: 0,
      alertsDays: 0,
      alertDeliveriesDays: 0,
    });

    session('s-new-done', T0 + 20 * DAY, 'refunded');
    ocppEvents(5, T0 + 20 * DAY);
    const money = () =>
      JSON.stringify([
        db.prepare('SELECT * FROM ledger_entries ORDER BY seq').all(),
        db.prepare('SELECT * FROM sessions ORDER BY id').all(),
        db.prepare('SELECT * FROM wallets ORDER BY driver_id').all(),
      ]);
    const moneyBefore = money();

    now = T0 + 31 * DAY; // past the key and command windows only
    const r = retention(10);
    // one batch deletes at most batchRows of a table
    expect(r.pruneBatch()).toEqual({
      ocppEventsDays: 0,
      transactionEventsDays: 0,
      idempotencyKeysDays: 1,
      uplinkCommandsDays: 1,
      alertsDays: 0,
      alertDeliveriesDays: 0,
    });
    expect(db.prepare('SELECT key FROM idempotency_keys ORDER BY key').all()).toEqual([
      { key: 'key-s-new-done' },
      { key: 'key-s-old-open' },
    ]);

    now = T0 + 91 * DAY; // past every window
    const batch = r.pruneBatch();
    expect(batch.ocppEventsDays).toBe(10);
    const total = await r.pruneAll();
    expect(batch.ocppEventsDays + total.ocppEventsDays).toBe(25);
    // only the ended old session's events; the open one's stay however old
    expect(batch.transactionEventsDays + total.transactionEventsDays).toBe(3);
    expect(count('ocpp_events')).toBe(5);
    expect(
      db
        .prepare(
          `SELECT DISTINCT t.transaction_id FROM ocpp201_transaction_events e
             JOIN ocpp201_transactions t USING (tx_key) ORDER BY 1`,
        )
        .all(),
    ).toEqual([{ transaction_id: 'tx-s-new-done' }, { transaction_id: 'tx-s-old-open' }]);
    // the open session keeps its key however old
    expect(db.prepare('SELECT key FROM idempotency_keys ORDER BY key').all()).toEqual([
      { key: 'key-s-old-open' },
    ]);
    expect(money()).toBe(moneyBefore);
    expect(verifyLedger(db).ok).toBe(true);
    expect(lines.join('')).toContain('retention: rows past their window deleted');
  });

  it('prunes 2.0.1 events in arrival order: past the window only, open sessions kept, batch by batch', async () => {
    session('s-open-first', T0, 'open'); // the smallest key, kept however old
    session('s-long', T0, 'refunded'); // heard of before the window's start, events on both sides
    session('s-after', T0 + 5 * DAY, 'refunded');
    session('s-recent', T0 + 50 * DAY, 'refunded');
    const key = (transactionId: string) =>
      (
        db
          .prepare('SELECT tx_key FROM ocpp201_transactions WHERE transaction_id = ?')
          .get(transactionId) as { tx_key: number }
      ).tx_key;
    for (const seq of [3, 4]) {
      insertEvent(key('tx-s-long'), seq, T0 + 60 * DAY);
    }
    const left = () =>
      db
        .prepare(
          `SELECT t.transaction_id AS tx, e.seq_no AS seq FROM ocpp201_transaction_events e
             JOIN ocpp201_transactions t USING (tx_key) ORDER BY e.tx_key, e.seq_no`,
        )
        .all();

    now = T0 + 100 * DAY; // the window starts at T0 + 10 days
    const pruned = await retention(2).pruneAll();
    expect(pruned.transactionEventsDays).toBe(6);
    expect(left()).toEqual([
      { tx: 'tx-s-open-first', seq: 0 },
      { tx: 'tx-s-open-first', seq: 1 },
      { tx: 'tx-s-open-first', seq: 2 },
      { tx: 'tx-s-long', seq: 3 },
      { tx: 'tx-s-long', seq: 4 },
      { tx: 'tx-s-recent', seq: 0 },
      { tx: 'tx-s-recent', seq: 1 },
      { tx: 'tx-s-recent', seq: 2 },
    ]);
    expect((await retention(2).pruneAll()).transactionEventsDays).toBe(0);

    // Far past every window, all but the open session's and the newest event go: ids never go
    // back, so every transaction's span of ids stays true (migration 034).
    now = T0 + 1000 * DAY;
    expect((await retention(2).pruneAll()).transactionEventsDays).toBe(4);
    expect(left()).toEqual([
      { tx: 'tx-s-open-first', seq: 0 },
      { tx: 'tx-s-open-first', seq: 1 },
      { tx: 'tx-s-open-first', seq: 2 },
      { tx: 'tx-s-long', seq: 4 },
    ]);
  });

  it('walks 2.0.1 events in arrival order only, up to the first received after the window start', () => {
    const plan = (
      db.prepare(`EXPLAIN QUERY PLAN ${PRUNE_TRANSACTION_EVENTS}`).all(iso(T0), 10) as {
        detail: string;
      }[]
    ).map((r) => r.detail);
    expect(plan).toContain('SEARCH e USING INTEGER PRIMARY KEY (rowid<?)');
    expect(plan).toContain('SEARCH t USING INTEGER PRIMARY KEY (rowid=?)');
    // The one walk of the table: in id order from its start, stopping at the first event
    // received at or after the window's start (LIMIT 1).
    expect(plan.filter((d) => d.startsWith('SCAN') && !d.startsWith('SCAN CONSTANT'))).toEqual([
      'SCAN e',
      'SCAN cut',
      'SCAN upto',
    ]);
  });

  it('the schema itself refuses to forget what an open session needs', () => {
    session('s-open', T0, 'open');
    expect(() => db.prepare("DELETE FROM idempotency_keys WHERE key = 'key-s-open'").run()).toThrow(
      /open session is never forgotten/,
    );
    expect(() => db.prepare('DELETE FROM ocpp201_transaction_events').run()).toThrow(
      /open session's transaction are kept/,
    );
    expect(() => db.prepare('DELETE FROM ledger_entries').run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM sessions').run()).toThrow(/never deleted/);
  });

  it('a window of 0 keeps rows forever', async () => {
    session('s-done', T0, 'refunded');
    now = T0 + 3650 * DAY;
    const r = new Retention({
      db,
      clock: { now: () => now },
      log,
      windows: { ...windows, idempotencyKeysDays: 0 },
      batchRows: 100,
      intervalMs: 60_000,
    });
    expect((await r.pruneAll()).idempotencyKeysDays).toBe(0);
    expect(count('idempotency_keys')).toBe(1);
  });

  it('config: documented defaults, and a window must be a number of days', () => {
    const config = parseConfig(testConfig(dir), dir);
    expect(config.retention).toEqual({
      ocppEventsDays: 90,
      transactionEventsDays: 90,
      idempotencyKeysDays: 30,
      uplinkCommandsDays: 30,
      alertsDays: 365,
      alertDeliveriesDays: 90,
      logFilesDays: 90,
      firmwareFilesDays: 0,
      intervalMinutes: 60,
      batchRows: 1000,
    });
    expect(config.transfers.jobTimeoutMinutes).toBe(1440);
    expect(config.shutdown.drainTimeoutSeconds).toBe(0);
    expect(() => parseConfig(testConfig(dir, { retention: { ocppEventsDays: -1 } }), dir)).toThrow(
      /config key retention.ocppEventsDays/,
    );
    expect(() => parseConfig(testConfig(dir, { retention: { logFilesDays: -1 } }), dir)).toThrow(
      /config key retention.logFilesDays/,
    );
  });
});

describe('retention of alerts and their webhook events', () => {
  const deliveries = () =>
    db.prepare('SELECT alert_id AS alertId, body FROM alert_deliveries ORDER BY rowid').all() as {
      alertId: string | null;
      body: string;
    }[];

  it('deletes cleared alerts and finished events past their windows, never an open alert, one about a session or an event still waiting', async () => {
    const store = new AlertStore(db, new Outbox(db), 'test-site', true);
    const at = (days: number) => iso(T0 + days * DAY);
    const gone = store.raise('charger_offline', 'CP-1', {}, at(0));
    store.clear(gone.id, at(1));
    const open = store.raise('charger_offline', 'CP-2', {}, at(0)); // offline for a year
    const loss = store.raise('operator_loss', 's-1', { wh: 2000 }, at(0));
    store.acknowledge(loss.id, 'olu', at(1));
    store.clear(loss.id, at(1));
    const recent = store.raise('disk_space', '/var/lib', {}, at(300));
    store.clear(recent.id, at(300));
    const testEvent = store.sendTest('olu', at(0));
    // Every event taken by the receiver but the open alert's raise (still retried) and the test
    // event (given up).
    db.prepare(
      `UPDATE alert_deliveries SET delivered_at = created_at
       WHERE alert_id IS NOT NULL AND alert_id <> ?`,
    ).run(open.id);
    db.prepare('UPDATE alert_deliveries SET given_up_at = ? WHERE event_id = ?').run(
      at(3),
      testEvent,
    );
    expect(deliveries()).toHaveLength(8);

    now = T0 + 367 * DAY; // past alertsDays (365) for what cleared on day 1 only
    const pruned = await retention(2).pruneAll();
    expect(pruned).toMatchObject({ alertsDays: 1, alertDeliveriesDays: 5 });
    const left = db.prepare('SELECT id FROM alerts ORDER BY raised_at, kind').all();
    expect(left).toEqual([{ id: open.id }, { id: loss.id }, { id: recent.id }]);
    // The open alert's raise, still waiting; the recent alert's two, inside alertDeliveriesDays.
    expect(deliveries().map((d) => d.alertId)).toEqual([open.id, recent.id, recent.id]);

    // The schema refuses what retention must never do, whoever asks.
    expect(() => db.prepare('DELETE FROM alerts WHERE id = ?').run(open.id)).toThrow(
      /never deleted/,
    );
    expect(() => db.prepare('DELETE FROM alerts WHERE id = ?').run(loss.id)).toThrow(
      /never deleted/,
    );
    expect(() =>
      db.prepare('DELETE FROM alert_deliveries WHERE alert_id = ?').run(open.id),
    ).toThrow(/undelivered webhook event is never deleted/);
  });

  it('a window of 0 keeps alerts and events forever', async () => {
    const store = new AlertStore(db, new Outbox(db), 'test-site', true);
    const a = store.raise('charger_offline', 'CP-1', {}, iso(T0));
    store.clear(a.id, iso(T0));
    db.prepare('UPDATE alert_deliveries SET delivered_at = created_at').run();
    now = T0 + 3650 * DAY;
    const r = new Retention({
      db,
      clock: { now: () => now },
      log,
      windows: { ...windows, alertsDays: 0, alertDeliveriesDays: 0 },
      batchRows: 100,
      intervalMs: 60_000,
    });
    expect(await r.pruneAll()).toMatchObject({ alertsDays: 0, alertDeliveriesDays: 0 });
    expect(count('alerts')).toBe(1);
    expect(count('alert_deliveries')).toBe(2);
  });
});

describe('outbox alarm', () => {
  const thresholds = {
    warnDepth: 10,
    errorDepth: 100,
    warnAgeMs: 15 * 60_000,
    errorAgeMs: 240 * 60_000,
  };

  it('is ok, warns, then errs by depth or by the age of the oldest unsent row', () => {
    expect(outboxHealthOf(0, null, T0, thresholds).level).toBe('ok');
    expect(outboxHealthOf(9, iso(T0), T0 + 14 * 60_000, thresholds).level).toBe('ok');
    expect(outboxHealthOf(10, iso(T0), T0, thresholds)).toMatchObject({
      level: 'warn',
      reasons: ['10 unsent rows (warnDepth 10)'],
    });
    expect(outboxHealthOf(1, iso(T0), T0 + 15 * 60_000, thresholds)).toMatchObject({
      level: 'warn',
      oldestUnsentAgeSeconds: 900,
    });
    expect(outboxHealthOf(100, iso(T0), T0, thresholds).level).toBe('error');
    expect(outboxHealthOf(11, iso(T0), T0 + 240 * 60_000, thresholds)).toMatchObject({
      level: 'error',
      reasons: [
        '11 unsent rows (warnDepth 10)',
        'oldest unsent row is 240 min old (errorAgeMinutes 240)',
      ],
    });
  });

  it('StorageHealth reads the real outbox and the database size (file + WAL)', () => {
    const outbox = new Outbox(db);
    const health = new StorageHealth(db, outbox, () => now, thresholds);
    const before = health.outboxHealth().depth; // the seed's opening balances
    for (let i = 0; i < 12; i++) outbox.enqueue('ledger', { n: i }, iso(T0));
    now = T0 + 16 * 60_000;
    expect(health.outboxHealth()).toMatchObject({ depth: before + 12, level: 'warn' });
    const size = health.databaseSize();
    expect(size.path).toBe(join(dir, 'g.db'));
    expect(size.databaseBytes).toBeGreaterThan(0);
    expect(size.walBytes).toBeGreaterThan(0);
    expect(health.databaseSizeBytes()).toBe(size.databaseBytes + size.walBytes);
  });
});
