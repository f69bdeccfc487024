import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applySeed } from '../src/cli/offline/seed.js';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { SessionStore } from '../src/charging/session-store.js';
import { openDatabase, type Db } from '../src/store/database.js';
import { Outbox } from '../src/store/outbox.js';
import { InsufficientBalanceError, Wallet } from '../src/wallet/wallet.js';
import { DRIVERS, testSeed } from './helpers/gateway.js';

let dir: string;
let db: Db;
let wallet: Wallet;
let sessions: SessionStore;
const at = '2026-11-22T10:00:00.000Z';
const ada = DRIVERS.ada.id;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-wallet-'));
  db = openDatabase(join(dir, 'w.db'));
  applySeed(db, testSeed, at);
  wallet = new Wallet(db, new Outbox(db));
  sessions = new SessionStore(db);
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function newSession(amount: number, connectorId = `c${++n}`): string {
  const id = `ses_${n}_${connectorId}`;
  sessions.insert({
    id,
    driverId: ada,
    chargerId: 'CP-1',
    connectorId,
    amount,
    microNgnPerWh: 412_500,
    limitWh: 1000,
    idToken: `TOK${id}`,
    createdAt: at,
  });
  return id;
}

describe('database connection', () => {
  it('runs in WAL mode with synchronous=FULL and foreign keys on', () => {
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
  });
});

describe('schema invariants (enforced by SQLite, not only by code)', () => {
  it('the ledger is append-only', () => {
    expect(() => db.prepare('UPDATE ledger_entries SET amount = 1').run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM ledger_entries').run()).toThrow(/append-only/);
  });

  it('a balance can never go below zero', () => {
    const id = newSession(DRIVERS.ada.balance + 1);
    expect(() =>
      db
        .prepare(
          `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, session_id, created_at)
           VALUES ('x', ?, 'session_debit', ?, 0, ?, ?)`,
        )
        .run(ada, -(DRIVERS.ada.balance + 1), id, at),
    ).toThrow(/CHECK constraint/);
  });

  it('balance_after must be what the wallet holds after the entry', () => {
    expect(() =>
      db
        .prepare(
          `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, reference, created_at)
           VALUES ('x', ?, 'top_up', 10, 999, 'r1', ?)`,
        )
        .run(ada, at),
    ).toThrow(/balance_after/);
  });

  it('a session gets one debit and one outcome, never both refund and credit, never more than paid', () => {
    const id = newSession(1000);
    wallet.debitSession(ada, id, 1000, at);
    expect(() => wallet.debitSession(ada, id, 1000, at)).toThrow(/UNIQUE/);
    expect(() => wallet.creditSessionShortfall(ada, id, 1001, at)).toThrow(/exceed/);
    wallet.creditSessionShortfall(ada, id, 400, at);
    expect(() => wallet.refundSession(ada, id, at)).toThrow(/outcome/);
    expect(wallet.balance(ada)).toBe(DRIVERS.ada.balance - 600);
  });

  it('one open session per connector', () => {
    newSession(100, 'same');
    expect(() => newSession(100, 'same')).toThrow(/UNIQUE/);
  });

  it('a terminal session never changes and needs its ledger entry', () => {
    const id = newSession(1000);
    wallet.debitSession(ada, id, 1000, at);
    expect(() => sessions.markRefunded(id, 'test', at)).toThrow(/ledger entry/);
    db.transaction(() => {
      wallet.refundSession(ada, id, at);
      sessions.markRefunded(id, 'test', at);
    })();
    expect(() => db.prepare("UPDATE sessions SET state = 'charging' WHERE id = ?").run(id)).toThrow(
      /never changes/,
    );
  });
});

describe('wallet', () => {
  it('refuses a debit above the balance without writing anything', () => {
    const id = newSession(DRIVERS.ada.balance + 1);
    const entries = db.prepare('SELECT count(*) AS n FROM ledger_entries').get();
    expect(() => wallet.debitSession(ada, id, DRIVERS.ada.balance + 1, at)).toThrow(
      InsufficientBalanceError,
    );
    expect(db.prepare('SELECT count(*) AS n FROM ledger_entries').get()).toEqual(entries);
  });

  it('writes an outbox row in the same transaction as each ledger entry', () => {
    const before = db.prepare("SELECT count(*) AS n FROM outbox WHERE topic = 'ledger'").get() as {
      n: number;
    };
    const id = newSession(500);
    wallet.debitSession(ada, id, 500, at);
    const after = db.prepare("SELECT count(*) AS n FROM outbox WHERE topic = 'ledger'").get() as {
      n: number;
    };
    expect(after.n).toBe(before.n + 1);
  });

  it('a credit with a reference already applied is not applied again', () => {
    expect(wallet.credit(ada, 'top_up', 100, 'cmd-1', at)).not.toBeNull();
    expect(wallet.credit(ada, 'top_up', 100, 'cmd-1', at)).toBeNull();
    expect(wallet.balance(ada)).toBe(DRIVERS.ada.balance + 100);
  });

  it('for any sequence of debits, refunds, credits and top-ups: balance = sum of entries, never negative', () => {
    type Op =
      | { kind: 'debit'; amount: number }
      | { kind: 'refund'; pick: number }
      | { kind: 'settle'; pick: number; used: number }
      | { kind: 'topup'; amount: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        kind: fc.constant('debit' as const),
        amount: fc.integer({ min: 1, max: 30_000 }),
      }),
      fc.record({ kind: fc.constant('refund' as const), pick: fc.nat() }),
      fc.record({
        kind: fc.constant('settle' as const),
        pick: fc.nat(),
        used: fc.integer({ min: 0, max: 100 }),
      }),
      fc.record({
        kind: fc.constant('topup' as const),
        amount: fc.integer({ min: 1, max: 10_000 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const open: { id: string; amount: number }[] = [];
        let expected = wallet.balance(ada);
        for (const o of ops) {
          if (o.kind === 'debit') {
            const id = newSession(o.amount);
            try {
              wallet.debitSession(ada, id, o.amount, at);
              open.push({ id, amount: o.amount });
              expected -= o.amount;
            } catch (err) {
              expect(err).toBeInstanceOf(InsufficientBalanceError);
              expect(expected).toBeLessThan(o.amount);
            }
          } else if (o.kind === 'topup') {
            wallet.credit(ada, 'top_up', o.amount, `t${++n}`, at);
            expected += o.amount;
          } else if (open.length > 0) {
            const [s] = open.splice(o.pick % open.length, 1);
            if (!s) continue;
            if (o.kind === 'refund') {
              wallet.refundSession(ada, s.id, at);
              expected += s.amount;
            } else {
              const credit = Math.floor((s.amount * (100 - o.used)) / 100);
              wallet.creditSessionShortfall(ada, s.id, credit, at);
              expected += credit;
            }
          }
          expect(wallet.balance(ada)).toBe(expected);
          expect(expected).toBeGreaterThanOrEqual(0);
        }
        const report = verifyLedger(db);
        const balanceChecks = report.checks.filter((c) => c.name.includes('balance'));
        for (const c of balanceChecks) expect(c.violations).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });
});
