import { uuid7 } from '../../../src/shared/uuid7.js';
import Database from 'better-sqlite3';
import { newIdToken, newSessionId } from '../../../src/charging/id-tokens.js';
import { migrate } from '../../../src/store/migrations.js';
import { PAGE_SIZE } from '../../../src/store/page-size.js';
import { seedBenchFleet } from '../lib/seed.js';
import { percentile } from '../lib/stats.js';
import { serveParent } from './children.js';
import type { RawDebitRequest, RawDebitResult } from './messages.js';

/**
 * The reference for the Start figures: the debit transaction of `Charging.debit` (session row,
 * balance check, ledger entry whose trigger updates the wallet, the ledger and session outbox
 * rows) as plain prepared statements in one better-sqlite3 transaction, on a file with the
 * gateway's schema and pragmas, in a loop for a bounded time. SQLite runs one write transaction at
 * a time, so this loop is also the ceiling at any concurrency.
 */
function run(req: RawDebitRequest): RawDebitResult {
  const db = new Database(req.dbPath);
  // The pragmas of src/store/database.ts (its page size), then its schema.
  db.pragma(`page_size = ${PAGE_SIZE}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  const drivers = seedBenchFleet(db, req.drivers, 100_000_000);

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
  const amount = req.amount;
  const microNgnPerWh = 412_500;
  const limitWh = Math.floor((amount * 1_000_000) / microNgnPerWh);

  const debit = db.transaction((driverId: string, connectorId: string) => {
    const at = new Date().toISOString();
    const sessionId = newSessionId();
    const session = { id: sessionId, driverId, chargerId: 'RAW', connectorId, amount };
    insertSession.run({
      ...session,
      microNgnPerWh,
      limitWh,
      idToken: newIdToken(),
      createdAt: at,
    });
    // Wallet.debitSession checks the balance, then Wallet.append reads it again.
    const before = balance.get(driverId)?.balance ?? 0;
    if (before < amount) throw new Error(`raw debit: balance ${before} < ${amount}`);
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
    return balanceAfter;
  });

  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  const end = started + BigInt(Math.round(req.seconds * 1e9));
  let n = 0;
  for (let now = started; now < end;) {
    // A connector per transaction: in the gateway a connector's session is settled before reuse,
    // here none is, and the one-open-session-per-connector index must not refuse.
    debit(drivers[n % drivers.length] as string, String(n));
    n += 1;
    const after = process.hrtime.bigint();
    latencies.push(Number(after - now) / 1e6);
    now = after;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  db.close();
  return {
    transactions: n,
    perSecond: n / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

serveParent<RawDebitRequest, RawDebitResult>(async (req) => run(req));
