import type Database from 'better-sqlite3';
import { newIdToken, newSessionId } from '../../../src/charging/id-tokens.js';
import { uuid7 } from '../../../src/shared/uuid7.js';

/**
 * The gateway's two money transactions as plain prepared statements on a database with its schema
 * (its CHECKs and triggers are part of what they cost), for the bare references: the Start's debit
 * (Charging.debit: session row, balance check, ledger entry whose trigger updates the wallet, the
 * ledger and session outbox rows) and the settlement (SessionOutcomes.settle →
 * Wallet.creditSessionShortfall → SessionStore.markSettled, with both outbox rows). Each returned
 * function is one transaction (a savepoint inside an open one).
 */

/** A debit made: the session it opened (`authorizing`) and the token its remote start names. */
export interface Debited {
  sessionId: string;
  idToken: string;
  balanceAfter: number;
}

/** What a settled session is billed in every bare reference: 500 Wh at 412.5 NGN/kWh, rounded down. */
const DELIVERED_WH = 500;
const COST = 206;

export function prepareDebit(
  db: Database.Database,
  amount: number,
): (driverId: string, connectorId: string) => Debited {
  // The same SQL as SessionStore.insert, Wallet.balance/append and Outbox.enqueue.
  const insertSession = db.prepare(
    `INSERT INTO sessions (id, driver_id, charger_id, connector_id, state, amount, price_micro_ngn_per_wh,
       limit_wh, id_token, created_at)
     VALUES (@id, @driverId, @chargerId, @connectorId, 'authorizing', @amount, @microNgnPerWh,
       @limitWh, @idToken, @createdAt)`,
  );
  const balance = db.prepare<[string], { balance: number }>(
    'SELECT balance FROM wallets WHERE driver_id = ?',
  );
  const insertEntry = db.prepare(
    `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, session_id, reference, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertOutbox = db.prepare(
    'INSERT INTO outbox (id, topic, payload, created_at) VALUES (?, ?, ?, ?)',
  );
  const microNgnPerWh = 412_500;
  const limitWh = Math.floor((amount * 1_000_000) / microNgnPerWh);
  return db.transaction((driverId: string, connectorId: string): Debited => {
    const at = new Date().toISOString();
    const sessionId = newSessionId();
    const idToken = newIdToken();
    const session = { id: sessionId, driverId, chargerId: 'RAW', connectorId, amount };
    insertSession.run({ ...session, microNgnPerWh, limitWh, idToken, createdAt: at });
    // Wallet.debitSession checks the balance, then Wallet.append reads it again.
    const before = balance.get(driverId)?.balance ?? 0;
    if (before < amount) throw new Error(`bare debit: balance ${before} < ${amount}`);
    const balanceAfter = (balance.get(driverId)?.balance ?? 0) - amount;
    const entry = {
      id: uuid7(),
      driverId,
      kind: 'session_debit',
      amount: -amount,
      balanceAfter,
      sessionId,
      reference: null,
      createdAt: at,
    };
    insertEntry.run(
      entry.id,
      driverId,
      entry.kind,
      entry.amount,
      balanceAfter,
      sessionId,
      null,
      at,
    );
    const ledgerId = uuid7();
    insertOutbox.run(
      ledgerId,
      'ledger',
      JSON.stringify({ id: ledgerId, type: 'ledger_entry', entry }),
      at,
    );
    const eventId = uuid7();
    insertOutbox.run(
      eventId,
      'sessions',
      JSON.stringify({
        id: eventId,
        type: 'session_state',
        sessionId,
        driverId,
        chargerId: session.chargerId,
        connectorId,
        state: 'authorizing',
        amount,
        at,
        limitWh,
      }),
      at,
    );
    return { sessionId, idToken, balanceAfter };
  });
}

/** The settlement of a charging session: its shortfall credited, the row settled; throws unless it was charging. */
export function prepareSettlement(db: Database.Database): (sessionId: string) => void {
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
  const credit = db.transaction(
    (driverId: string, sessionId: string, amount: number, now: string) => {
      const b = (balance.get(driverId) as { balance: number }).balance + amount;
      const entry = {
        id: uuid7(),
        driverId,
        kind: 'session_credit',
        amount,
        balanceAfter: b,
        sessionId,
        reference: null,
        createdAt: now,
      };
      insertEntry.run(entry.id, driverId, 'session_credit', amount, b, sessionId, null, now);
      enqueue('ledger', { type: 'ledger_entry', entry }, now);
    },
  );
  return db.transaction((sessionId: string) => {
    const now = new Date().toISOString();
    const session = byId.get(sessionId) as {
      amount: number;
      driver_id: string;
      charger_id: string;
      connector_id: string;
    };
    const credited = session.amount - COST;
    credit(session.driver_id, sessionId, credited, now);
    if (settle.run(DELIVERED_WH, COST, credited, 'Local', now, sessionId).changes !== 1)
      throw new Error(`bare settlement: session ${sessionId} was not charging`);
    enqueue(
      'sessions',
      {
        type: 'session_state',
        sessionId,
        driverId: session.driver_id,
        chargerId: session.charger_id,
        connectorId: session.connector_id,
        state: 'settled',
        amount: session.amount,
        at: now,
        reason: 'Local',
        deliveredWh: DELIVERED_WH,
        cost: COST,
        credited,
      },
      now,
    );
  });
}
