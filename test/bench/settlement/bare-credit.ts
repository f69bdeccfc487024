import { uuid7 } from '../../../src/shared/uuid7.js';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { openBareDatabase } from '../lib/bare-database.js';
import { prepareSettlement } from '../lib/bare-money.js';
import { seedReferenceDriver } from '../lib/seed.js';

/**
 * The reference for "credit committed": the settlement transaction on bare better-sqlite3, timed
 * in this process: the gateway's pragmas and schema (../lib/bare-database.ts; its CHECKs and
 * triggers are part of what a credit costs) and the settlement's statements in the gateway's order
 * (../lib/bare-money.ts). What is left out is everything around them: the OCPP frame, the session
 * lookup by transaction, the event loop.
 */
export function bareCreditMs(dir: string, count: number): number[] {
  const db = openBareDatabase(join(dir, 'bare-credit.db'));
  try {
    const at = new Date().toISOString();
    seedReferenceDriver(db, at);
    const ids = Array.from({ length: count }, () => randomUUID());
    const insertSession = db.prepare(
      `INSERT INTO sessions (id, driver_id, charger_id, connector_id, state, amount, price_micro_ngn_per_wh,
         limit_wh, id_token, transaction_ref, meter_start_wh, last_meter_wh, created_at, started_at)
       VALUES (?, 'drv-ref', 'REF', ?, 'charging', 2000, 412500, 4848, ?, ?, 1000, 1500, ?, ?)`,
    );
    const insertDebit = db.prepare(
      `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, session_id, created_at)
       VALUES (?, 'drv-ref', 'session_debit', -2000,
         (SELECT balance FROM wallets WHERE driver_id = 'drv-ref') - 2000, ?, ?)`,
    );
    db.transaction(() => {
      ids.forEach((id, i) => {
        insertSession.run(id, String(i + 1), randomUUID(), String(i + 1), at, at);
        insertDebit.run(uuid7(), id, at);
      });
    })();

    const settlement = prepareSettlement(db);
    return ids.map((id) => {
      const t0 = process.hrtime.bigint();
      settlement(id);
      return Number(process.hrtime.bigint() - t0) / 1e6;
    });
  } finally {
    db.close();
  }
}
