import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { applySeed } from '../src/cli/offline/seed.js';
import { formatLedgerReport, verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { IdempotencyKeys } from '../src/charging/idempotency.js';
import { SessionOutcomes } from '../src/charging/outcomes.js';
import { SessionStore } from '../src/charging/session-store.js';
import { openDatabase, type Db } from '../src/store/database.js';
import { Outbox } from '../src/store/outbox.js';
import { Wallet } from '../src/wallet/wallet.js';
import { DRIVERS, testConfig, testSeed } from './helpers/gateway.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');
const AT = '2026-11-22T10:00:00.000Z';
const PRICE = 412_500; // micro-NGN per Wh

let dir: string;
let soundPath: string;

/** A ledger with a session in each kind of state: settled, refunded, charging, authorizing. */
function buildSoundLedger(db: Db): void {
  applySeed(db, testSeed, AT);
  const outbox = new Outbox(db);
  const wallet = new Wallet(db, outbox);
  const sessions = new SessionStore(db);
  const outcomes = new SessionOutcomes(db, sessions, wallet, outbox);
  const keys = new IdempotencyKeys(db);
  const open = (id: string, connectorId: string, amount: number) =>
    db.transaction(() => {
      sessions.insert({
        id,
        driverId: DRIVERS.ada.id,
        chargerId: 'CP-1',
        connectorId,
        amount,
        microNgnPerWh: PRICE,
        limitWh: Math.floor((amount * 1_000_000) / PRICE),
        idToken: `TOK-${id}`,
        createdAt: AT,
      });
      wallet.debitSession(DRIVERS.ada.id, id, amount, AT);
      keys.record(DRIVERS.ada.id, `key-${id}`, 'a'.repeat(64), id, AT);
    })();
  open('s_settled', '1', 4000);
  sessions.markCharging('s_settled', 'tx-1', 1000, AT);
  const charging = sessions.get('s_settled');
  if (!charging) throw new Error('s_settled not stored');
  // 8,000 Wh cost 3,300 NGN, 700 credited
  outcomes.settle(charging, 8000, 'Local', AT, { line: 'driver', gapWh: null });
  open('s_refunded', '1', 2500);
  outcomes.refund('s_refunded', 'charger_rejected', AT);
  open('s_charging', '1', 3000);
  sessions.markCharging('s_charging', 'tx-2', 5000, AT);
  open('s_authorizing', '2', 1500);
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-verify-'));
  soundPath = join(dir, 'sound.db');
  const db = openDatabase(soundPath);
  buildSoundLedger(db);
  db.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A consistent copy of the sound ledger to damage. */
function copyOfSound(name: string): string {
  const path = join(dir, `${name}.db`);
  const db = new Database(soundPath);
  db.exec(`VACUUM INTO '${path}'`);
  db.close();
  return path;
}

const moneyIn =
  DRIVERS.ada.balance + DRIVERS.bola.balance + DRIVERS.gone.balance + DRIVERS.other.balance;

describe('ledger verify', () => {
  it('a sound ledger passes every check and the summary adds up', () => {
    const db = openDatabase(soundPath);
    try {
      const report = verifyLedger(db);
      expect(report.checks.filter((c) => c.violations.length > 0)).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.sessionsByState).toEqual({
        authorizing: 1,
        authorized: 0,
        charging: 1,
        stopping: 0,
        settled: 1,
        refunded: 1,
      });
      expect(report.heldAmount).toBe(3000 + 1500);
      expect(report.spent).toBe(3300);
      expect(report.moneyIn).toBe(moneyIn);
      expect(report.totalBalance).toBe(moneyIn - 4500 - 3300);
      expect(report.wallets).toBe(4);
      // 4 openings; 4 debits; 1 credit; 1 refund
      expect(report.entries).toBe(10);
      const text = formatLedgerReport(report);
      expect(text).toContain(
        'sessions by state: authorizing 1, authorized 0, charging 1, stopping 0, settled 1, refunded 1',
      );
      expect(text).toContain('held by open sessions:                    4,500 NGN (2 open)');
      expect(text).toContain('spent on settled sessions:                3,300 NGN');
    } finally {
      db.close();
    }
  });

  // Each damage bypasses the schema (dropping the trigger that would stop it), as a bad restore,
  // a hand edit or a bug in a future migration could; the check named must catch it.
  const damages: { name: string; sql: string; failing: string[] }[] = [
    {
      name: 'a refund on top of a settlement',
      sql: `DROP TRIGGER ledger_single_outcome;
        INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, session_id, created_at)
        VALUES ('x1', 'drv-ada', 'session_refund', 4000,
          (SELECT balance FROM wallets WHERE driver_id = 'drv-ada') + 4000, 's_settled', '${AT}')`,
      failing: [
        'every ended session has exactly one outcome, and open sessions none',
        'money in = what the wallets hold + held by open sessions + spent on settled ones',
      ],
    },
    {
      name: 'a session marked refunded without its refund',
      sql: `DROP TRIGGER sessions_outcome_needs_entry;
        UPDATE sessions SET state = 'refunded', end_reason = 'hand edit' WHERE id = 's_charging'`,
      failing: [
        'every ended session has exactly one outcome, and open sessions none',
        'money in = what the wallets hold + held by open sessions + spent on settled ones',
      ],
    },
    {
      name: 'a partial refund',
      sql: `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, session_id, created_at)
        VALUES ('x2', 'drv-ada', 'session_refund', 700,
          (SELECT balance FROM wallets WHERE driver_id = 'drv-ada') + 700, 's_authorizing', '${AT}');
        UPDATE sessions SET state = 'refunded' WHERE id = 's_authorizing'`,
      failing: [
        'refunds give back the whole debit',
        'money in = what the wallets hold + held by open sessions + spent on settled ones',
      ],
    },
    {
      // Nothing in the schema ties a session entry's wallet to the session's driver.
      name: 'a session debited from another driver’s wallet',
      sql: `INSERT INTO sessions (id, driver_id, charger_id, connector_id, state, amount,
          price_micro_ngn_per_wh, limit_wh, id_token, created_at)
        VALUES ('s_wrong', 'drv-ada', 'CP-AC', '1', 'authorizing', 500, ${PRICE}, 1212, 'TOK-wrong', '${AT}');
        INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, session_id, created_at)
        VALUES ('x3', 'drv-bola', 'session_debit', -500,
          (SELECT balance FROM wallets WHERE driver_id = 'drv-bola') - 500, 's_wrong', '${AT}')`,
      failing: ['every session entry is on the wallet of the session’s driver'],
    },
    {
      name: 'money created by editing a balance',
      sql: `DROP TRIGGER ledger_apply;
        UPDATE wallets SET balance = balance + 1 WHERE driver_id = 'drv-bola'`,
      failing: [
        'every balance equals the sum of its ledger entries',
        'money in = what the wallets hold + held by open sessions + spent on settled ones',
      ],
    },
    {
      name: 'an idempotency key bound to another driver’s session',
      sql: `DROP TRIGGER idempotency_keys_final;
        UPDATE idempotency_keys SET driver_id = 'drv-bola' WHERE session_id = 's_charging'`,
      failing: ['every idempotency key is bound to a debited session of its own driver'],
    },
  ];

  it.each(damages)('catches $name', ({ name, sql, failing }) => {
    const path = copyOfSound(name.replace(/\W+/g, '-'));
    const db = new Database(path);
    try {
      db.exec(sql);
      const report = verifyLedger(db);
      expect(report.ok).toBe(false);
      expect(
        report.checks
          .filter((c) => c.violations.length > 0)
          .map((c) => c.name)
          .sort(),
      ).toEqual([...failing].sort());
    } finally {
      db.close();
    }
  });

  it('the CLI prints the checks and the summary, and exits 1 on a damaged copy', async () => {
    const cli = async (dbPath: string) => {
      const cfg = join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
      writeFileSync(cfg, stringify({ ...testConfig(dir), database: { path: dbPath } }));
      try {
        const { stdout } = await run(process.execPath, [CLI, 'ledger', 'verify', '--config', cfg]);
        return { code: 0, stdout };
      } catch (err) {
        const e = err as { code: number; stdout: string };
        return { code: e.code, stdout: e.stdout };
      }
    };
    const sound = await cli(soundPath);
    expect(sound.code).toBe(0);
    expect(sound.stdout).toContain(
      'ok   every ended session has exactly one outcome, and open sessions none',
    );
    expect(sound.stdout).toContain('wallets 4, ledger entries 10, sessions 4');
    expect(sound.stdout).toContain('held by open sessions:                    4,500 NGN (2 open)');
    expect(sound.stdout).toContain('ledger verified: all invariants hold');

    const damaged = copyOfSound('cli-damaged');
    const db = new Database(damaged);
    db.exec(damages[1]!.sql);
    db.close();
    const bad = await cli(damaged);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(
      'FAIL every ended session has exactly one outcome, and open sessions none',
    );
    expect(bad.stdout).toContain('session s_charging (refunded): 0 refunds, 0 credits');
    expect(bad.stdout).toContain('ledger verification FAILED');
  });
});
