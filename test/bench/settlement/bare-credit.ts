import { uuid7 } from '../../../src/shared/uuid7.js';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { migrate } from '../../../src/store/migrations.js';
import { PAGE_SIZE } from '../../../src/store/page-size.js';
import { seedReferenceDriver } from '../lib/seed.js';

/**
 * The reference for "credit committed": the settlement transaction on bare better-sqlite3, timed
 * in this process. Same file-backed WAL database, same four pragmas as src/store/database.ts, same
 * schema (its CHECKs and triggers are part of what a credit costs), and the same statements in the
 * same order as SessionOutcomes.settle → Wallet.creditSessionShortfall (nested, so a savepoint) →
 * SessionStore.markSettled, with both outbox rows. What is left out is everything around them: the
 * OCPP frame, the session lookup by transaction, the event loop.
 */
export function bareCreditMs(dir: string, count: number): number[] {
  const db = new Database(join(dir, 'bare-credit.db'));
  db.pragma(`page_size = ${PAGE_SIZE}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  try {
    migrate(db);
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

    // The statements of the real settlement, prepared once as the gateway prepares them.
    const byId = db.prepare('SELECT * FROM sessions WHERE id = ?');
    const balance = db.prepare('SELECT balance FROM wallets WHERE driver_id = ?');
    const insertEntry = db.prepare(
      `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, session_id, reference, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const outbox = db.prepare(
      'INSERT INTO outbox (id, topic, payload, created_at) VALUES (?, ?, ?, ?)',
    );
    const settle = db.prepare(
      `UPDATE sessions SET state = 'settled', delivered_wh = ?, cost = ?, credited = ?, end_reason = ?,
         ended_at = ? WHERE id = ? AND state IN ('charging', 'stopping')`,
    );
    const enqueue = (topic: string, payload: Record<string, unknown>, now: string) => {
      const id = uuid7();
      outbox.run(id, topic, JSON.stringify({ id, ...payload }), now);
    };
    const credit = db.transaction((sessionId: string, amount: number, now: string) => {
      const b = (balance.get('drv-ref') as { balance: number }).balance + amount;
      const entry = {
        id: uuid7(),
        driverId: 'drv-ref',
        kind: 'session_credit',
        amount,
        balanceAfter: b,
        sessionId,
        reference: null,
        createdAt: now,
      };
      insertEntry.run(entry.id, 'drv-ref', 'session_credit', amount, b, sessionId, null, now);
      enqueue('ledger', { type: 'ledger_entry', entry }, now);
    });
    const settlement = db.transaction((sessionId: string) => {
      const now = new Date().toISOString();
      const session = byId.get(sessionId) as { amount: number; charger_id: string };
      const cost = 206; // 500 Wh at 412.5 NGN/kWh, rounded down: what the gateway runs see
      credit(sessionId, session.amount - cost, now);
      settle.run(500, cost, session.amount - cost, 'Local', now, sessionId);
      enqueue(
        'sessions',
        {
          type: 'session_state',
          sessionId,
          driverId: 'drv-ref',
          chargerId: session.charger_id,
          connectorId: '1',
          state: 'settled',
          amount: session.amount,
          at: now,
          reason: 'Local',
          deliveredWh: 500,
          cost,
          credited: session.amount - cost,
        },
        now,
      );
    });
    return ids.map((id) => {
      const t0 = process.hrtime.bigint();
      settlement(id);
      return Number(process.hrtime.bigint() - t0) / 1e6;
    });
  } finally {
    db.close();
  }
}
