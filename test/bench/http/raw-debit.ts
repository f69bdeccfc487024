import { openBareDatabase } from '../lib/bare-database.js';
import { prepareDebit } from '../lib/bare-money.js';
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
  const db = openBareDatabase(req.dbPath);
  const drivers = seedBenchFleet(db, req.drivers, 100_000_000);
  const debit = prepareDebit(db, req.amount);

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
