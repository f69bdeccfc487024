import { IdTokenStore, type BindInput } from '../../src/id-tokens/id-token-store.js';
import type { Db } from '../../src/store/database.js';

/** Binds a card to a driver as an operator would. */
export function bindCard(db: Db, driverId: string, value: string, extra: Partial<BindInput> = {}) {
  return new IdTokenStore(db).bind(
    { driverId, kind: 'card', type: 'ISO14443', value, source: 'operator', ...extra },
    new Date().toISOString(),
  );
}

/** Moves a wallet by an adjustment entry: a balance moves only through its ledger. */
export function adjustWallet(db: Db, driverId: string, amount: number): void {
  const { balance } = db
    .prepare('SELECT balance FROM wallets WHERE driver_id = ?')
    .get(driverId) as {
    balance: number;
  };
  db.prepare(
    `INSERT INTO ledger_entries
       (id, driver_id, kind, amount, balance_after, session_id, reference, created_at)
     VALUES (?, ?, 'adjustment', ?, ?, NULL, ?, ?)`,
  ).run(
    `adj-${Math.random()}`,
    driverId,
    amount,
    balance + amount,
    `test-${Math.random()}`,
    new Date().toISOString(),
  );
}
