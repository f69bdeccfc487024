import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applySeed } from '../src/cli/offline/seed.js';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { openDatabase } from '../src/store/database.js';
import { migrationV1 } from '../src/store/migrations/001-v1.js';
import { migrationOcpp201 } from '../src/store/migrations/002-ocpp201.js';
import { migrationUplink } from '../src/store/migrations/003-uplink.js';
import { DRIVERS, testSeed } from './helpers/gateway.js';

/**
 * A site upgrading from the last release (schema v3) keeps every wallet, ledger entry and session,
 * including sessions that were charging when the old gateway stopped.
 */
describe('upgrading a schema v3 database', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function releasedDatabase(path: string): void {
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    for (const sql of [migrationV1, migrationOcpp201, migrationUplink]) db.exec(sql);
    db.pragma('user_version = 3');
    applySeed(db, testSeed, '2026-11-01T08:00:00.000Z');
    const session = db.prepare(
      `INSERT INTO sessions (id, driver_id, charger_id, connector_id, state, amount,
         price_micro_ngn_per_wh, limit_wh, id_token, transaction_ref, meter_start_wh, last_meter_wh,
         created_at, started_at)
       VALUES (?, ?, 'CP-1', ?, 'charging', ?, 412500, ?, ?, ?, 1000, 3000, ?, ?)`,
    );
    const entry = db.prepare(
      `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, session_id, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    const at = '2026-11-01T09:00:00.000Z';
    const ada = DRIVERS.ada;
    // One session still charging, one settled, as the v3 gateway left them.
    session.run('s-open', ada.id, '1', 2000, 4848, 'tok-open', '7', at, at);
    entry.run('e-open', ada.id, 'session_debit', -2000, ada.balance - 2000, 's-open', at);
    session.run('s-done', ada.id, '2', 1000, 2424, 'tok-done', '8', at, at);
    entry.run('e-done', ada.id, 'session_debit', -1000, ada.balance - 3000, 's-done', at);
    // The schema wants the outcome's ledger entry before the session may say it is settled.
    entry.run('e-done-credit', ada.id, 'session_credit', 175, ada.balance - 2825, 's-done', at);
    db.prepare(
      `UPDATE sessions SET state = 'settled', delivered_wh = 2000, cost = 825, credited = 175,
         ended_at = ? WHERE id = 's-done'`,
    ).run(at);
    db.close();
  }

  it('migrates to the current schema with every invariant intact', () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-upgrade-'));
    const path = join(dir, 'gateway.db');
    releasedDatabase(path);

    const db = openDatabase(path);
    try {
      expect(db.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(5);
      const report = verifyLedger(db);
      expect(report.checks.filter((c) => c.violations.length > 0)).toEqual([]);
      expect(report.sessionsByState).toMatchObject({ charging: 1, settled: 1 });
      expect(report.heldAmount).toBe(2000);

      const rows = db
        .prepare(
          `SELECT id, state, meter_start_wh, last_meter_wh, meter_carried_wh, last_activity_at
           FROM sessions ORDER BY id`,
        )
        .all() as {
        id: string;
        state: string;
        meter_start_wh: number;
        last_meter_wh: number;
        meter_carried_wh: number;
        last_activity_at: string | null;
      }[];
      const [done, open] = rows;
      expect(open).toMatchObject({
        id: 's-open',
        state: 'charging',
        meter_start_wh: 1000,
        last_meter_wh: 3000,
        meter_carried_wh: 0,
      });
      // The silence rule counts from the upgrade, not from the session's start.
      expect(open?.last_activity_at).not.toBeNull();
      expect(done).toMatchObject({ id: 's-done', state: 'settled', last_activity_at: null });

      // The new tables work with the old rows: an idempotency key binds to the open session.
      db.prepare(
        `INSERT INTO idempotency_keys (driver_id, key, request_hash, session_id, created_at)
         VALUES (?, 'k1', ?, 's-open', ?)`,
      ).run(DRIVERS.ada.id, 'a'.repeat(64), new Date().toISOString());
      expect(verifyLedger(db).ok).toBe(true);
    } finally {
      db.close();
    }
  });
});
