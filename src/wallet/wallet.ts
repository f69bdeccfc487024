import { atomic } from '../store/atomic.js';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import type { Outbox } from '../store/outbox.js';
import { uuid7 } from '../shared/uuid7.js';

export type LedgerKind =
  'opening' | 'top_up' | 'adjustment' | 'session_debit' | 'session_refund' | 'session_credit';

export interface LedgerEntry {
  id: string;
  driverId: string;
  kind: LedgerKind;
  amount: number;
  balanceAfter: number;
  sessionId: string | null;
  reference: string | null;
  createdAt: string;
}

/** Who moved money by hand and why: kept with the entry (ledger_notes) and sent with it. */
export interface LedgerNote {
  /** `operator:<name>` for the operator API, `uplink:<command id>` for the fleet's cloud. */
  actor: string;
  reason: string;
}

export class InsufficientBalanceError extends Error {
  constructor(
    readonly balance: number,
    readonly amount: number,
  ) {
    super(`sub-wallet balance ${balance} NGN is less than ${amount} NGN`);
  }
}

export class WalletNotFoundError extends Error {}

/**
 * The only code that moves money. Every method writes exactly one ledger entry (and its outbox
 * row) inside a transaction; the schema's trigger applies the entry to the balance, so a caller
 * that composes several of these in its own transaction gets all or nothing.
 */
export class Wallet {
  private readonly balanceStmt: Statement<[string], { balance: number }>;
  private readonly insertEntry: Statement<
    [string, string, LedgerKind, number, number, string | null, string | null, string]
  >;
  private readonly sessionEntry: Statement<
    [string, LedgerKind],
    { amount: number; balance_after: number }
  >;
  private readonly createStmt: Statement<[string, string]>;
  private readonly openingStmt: Statement<[string], { seq: number }>;
  private readonly referenceStmt: Statement<
    [string, string],
    { id: string; amount: number; balance_after: number }
  >;
  // Prepared on first use: a Wallet also runs on a database of an older schema (seed, upgrade).
  private noteStmt: Statement<[string, string, string, string]> | undefined;

  constructor(
    private readonly db: Db,
    private readonly outbox: Outbox,
  ) {
    this.balanceStmt = db.prepare('SELECT balance FROM wallets WHERE driver_id = ?');
    this.insertEntry = db.prepare(
      `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, session_id, reference, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.sessionEntry = db.prepare(
      'SELECT amount, balance_after FROM ledger_entries WHERE session_id = ? AND kind = ?',
    );
    this.openingStmt = db.prepare(
      "SELECT seq FROM ledger_entries WHERE driver_id = ? AND kind = 'opening'",
    );
    this.referenceStmt = db.prepare(
      'SELECT id, amount, balance_after FROM ledger_entries WHERE driver_id = ? AND reference = ?',
    );
    this.createStmt = db.prepare(
      'INSERT INTO wallets (driver_id, balance, updated_at) VALUES (?, 0, ?) ON CONFLICT DO NOTHING',
    );
  }

  ensureWallet(driverId: string, at: string): void {
    this.createStmt.run(driverId, at);
  }

  balance(driverId: string): number {
    const row = this.balanceStmt.get(driverId);
    if (!row) throw new WalletNotFoundError(`no wallet for driver ${driverId}`);
    return row.balance;
  }

  /** The entry a credit with this reference made, if one did (references are kept forever). */
  referencedEntry(
    driverId: string,
    reference: string,
  ): { id: string; amount: number; balanceAfter: number } | undefined {
    const row = this.referenceStmt.get(driverId, reference);
    return row && { id: row.id, amount: row.amount, balanceAfter: row.balance_after };
  }

  /** A session's debit (amount as a positive figure) and the balance right after it. */
  sessionDebit(sessionId: string): { amount: number; balanceAfter: number } | undefined {
    const row = this.sessionEntry.get(sessionId, 'session_debit');
    return row ? { amount: -row.amount, balanceAfter: row.balance_after } : undefined;
  }

  /** Debits a session's payment; throws InsufficientBalanceError without writing anything. */
  debitSession(driverId: string, sessionId: string, amount: number, at: string): LedgerEntry {
    return atomic(this.db, () => {
      const balance = this.balance(driverId);
      if (balance < amount) throw new InsufficientBalanceError(balance, amount);
      return this.append(driverId, 'session_debit', -amount, sessionId, null, at);
    });
  }

  /** Gives back the whole debit of a session that never charged. */
  refundSession(driverId: string, sessionId: string, at: string): LedgerEntry {
    return atomic(this.db, () => {
      const debit = this.sessionEntry.get(sessionId, 'session_debit');
      if (!debit) throw new Error(`session ${sessionId} has no debit to refund`);
      return this.append(driverId, 'session_refund', -debit.amount, sessionId, null, at);
    });
  }

  /** Credits back what a settled session did not use (may be 0: the entry records the outcome). */
  creditSessionShortfall(
    driverId: string,
    sessionId: string,
    amount: number,
    at: string,
  ): LedgerEntry {
    return atomic(this.db, () =>
      this.append(driverId, 'session_credit', amount, sessionId, null, at),
    );
  }

  /**
   * Money from outside a session (opening balance, top-up, adjustment). A reference makes it
   * idempotent: the same reference for the same wallet is applied once; null when already applied.
   * Only an adjustment may be negative; one that would take the balance below zero throws
   * InsufficientBalanceError and writes nothing. A note (who, why) is written with the entry.
   */
  credit(
    driverId: string,
    kind: 'opening' | 'top_up' | 'adjustment',
    amount: number,
    reference: string,
    at: string,
    note?: LedgerNote,
  ): LedgerEntry | null {
    return atomic(this.db, () => {
      const seen =
        kind === 'opening'
          ? this.openingStmt.get(driverId)
          : this.referenceStmt.get(driverId, reference);
      if (seen) return null;
      const balance = this.balance(driverId);
      if (amount < 0 && balance + amount < 0) throw new InsufficientBalanceError(balance, -amount);
      return this.append(driverId, kind, amount, null, reference, at, note);
    });
  }

  private append(
    driverId: string,
    kind: LedgerKind,
    amount: number,
    sessionId: string | null,
    reference: string | null,
    at: string,
    note?: LedgerNote,
  ): LedgerEntry {
    if (!Number.isSafeInteger(amount))
      throw new Error(`ledger amount must be an integer: ${amount}`);
    const balanceAfter = this.balance(driverId) + amount;
    const entry: LedgerEntry = {
      id: uuid7(),
      driverId,
      kind,
      amount,
      balanceAfter,
      sessionId,
      reference,
      createdAt: at,
    };
    this.insertEntry.run(entry.id, driverId, kind, amount, balanceAfter, sessionId, reference, at);
    if (note) {
      this.noteStmt ??= this.db.prepare(
        'INSERT INTO ledger_notes (entry_id, actor, reason, created_at) VALUES (?, ?, ?, ?)',
      );
      this.noteStmt.run(entry.id, note.actor, note.reason, at);
    }
    this.outbox.enqueue('ledger', { type: 'ledger_entry', entry, ...(note ? { note } : {}) }, at);
    return entry;
  }
}
