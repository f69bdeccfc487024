import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionStore } from '../../../src/charging/session-store.js';
import { uuid7 } from '../../../src/shared/uuid7.js';
import { atomic } from '../../../src/store/atomic.js';
import { openBareDatabase } from './bare-database.js';
import { seedReferenceDriver } from './seed.js';

/**
 * CPU per call of single statements and wrappers on a Start's path, each alone, on the gateway's
 * schema with SESSIONS charging sessions: what a statement counted by statement-count.ts costs.
 *   node dist-bench/test/bench/lib/statement-costs.js
 * Each case runs over every session inside one open transaction, rolled back (a statement run
 * between transactions also takes and drops its own read transaction); ROUNDS alternating rounds
 * after one warm-up, the median round and the min–max printed.
 */
const SESSIONS = 2_000;
const ROUNDS = 9;

const dir = mkdtempSync(join(tmpdir(), 'statement-costs-'));
const db = openBareDatabase(join(dir, 'costs.db'));
try {
  const at = new Date().toISOString();
  seedReferenceDriver(db, at);
  const insert = db.prepare(
    `INSERT INTO sessions (id, driver_id, charger_id, connector_id, state, amount, price_micro_ngn_per_wh,
       limit_wh, id_token, transaction_ref, meter_start_wh, last_meter_wh, created_at, started_at)
     VALUES (?, 'drv-ref', ?, '1', 'charging', 2000, 412500, 4848, ?, ?, 1000, 1500, ?, ?)`,
  );
  const debit = db.prepare(
    `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, session_id, created_at)
     VALUES (?, 'drv-ref', 'session_debit', -2000,
       (SELECT balance FROM wallets WHERE driver_id = 'drv-ref') - 2000, ?, ?)`,
  );
  const sessions = Array.from({ length: SESSIONS }, (_, i) => ({
    id: randomUUID(),
    token: randomUUID(),
    chargerId: `CP-${i}`,
    ref: String(100_000 + i),
  }));
  db.transaction(() => {
    for (const s of sessions) {
      insert.run(s.id, s.chargerId, s.token, s.ref, at, at);
      debit.run(uuid7(), s.id, at);
    }
  })();
  const store = new SessionStore(db);
  const balance = db.prepare('SELECT balance FROM wallets WHERE driver_id = ?');
  // As the stop line was written before the settlement at 446823a.
  const stopLine = db.prepare(
    `UPDATE sessions SET stop_line = ?, stop_line_gap_wh = ?
     WHERE id = ? AND state IN ('charging', 'stopping')`,
  );
  // store/durability.ts: read before and after each relaxed commit.
  const marks = db.prepare(
    `SELECT coalesce(sum(seq) FILTER (WHERE name = 'ledger_entries'), 0) AS ledger,
            coalesce(sum(seq) FILTER (WHERE name = 'outbox'), 0) AS outbox
       FROM sqlite_sequence WHERE name IN ('ledger_entries', 'outbox')`,
  );
  const normal = db.prepare('PRAGMA synchronous = NORMAL');
  const full = db.prepare('PRAGMA synchronous = FULL');
  const touch = db.prepare('UPDATE sessions SET last_activity_at = ? WHERE id = ?');
  type S = (typeof sessions)[number];
  const cases: Record<string, (s: S) => unknown> = {
    'SessionStore.get (SELECT * by id, the row mapped)': (s) => store.get(s.id),
    'SessionStore.byTransactionRef': (s) => store.byTransactionRef(s.chargerId, s.ref),
    'SessionStore.byIdToken': (s) => store.byIdToken(s.token),
    'SessionStore.stopAsker (no request)': (s) => store.stopAsker(s.id),
    "the wallet's balance": () => balance.get('drv-ref'),
    'the stop line UPDATE (446823a)': (s) => stopLine.run('driver', null, s.id),
    // relaxed() reads them before its BEGIN and after its COMMIT, outboxMayWait inside.
    'sqlite_sequence marks, between transactions': () => marks.get(),
    'sqlite_sequence marks, in a transaction': () => marks.get(),
    'PRAGMA synchronous NORMAL and FULL, between transactions': () => (normal.run(), full.run()),
    'a savepoint by db.transaction(fn)() built per call': (s) =>
      db.transaction(() => touch.run(at, s.id))(),
    'a savepoint by atomic(db, fn)': (s) => atomic(db, () => touch.run(at, s.id)),
    '(the loop alone)': () => undefined,
  };
  const perCall = new Map<string, number[]>(Object.keys(cases).map((k) => [k, []]));
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [name, run] of Object.entries(cases)) {
      const open = !name.endsWith('between transactions');
      if (open) db.exec('BEGIN');
      const before = process.cpuUsage();
      for (const s of sessions) run(s);
      const used = process.cpuUsage(before);
      if (open) db.exec('ROLLBACK');
      if (round > 0) perCall.get(name)?.push((used.user + used.system) / SESSIONS);
    }
  }
  console.log(`CPU per call, ${SESSIONS} charging sessions, median of ${ROUNDS} rounds (min–max):`);
  for (const [name, us] of perCall) {
    us.sort((a, b) => a - b);
    const median = us[Math.floor(us.length / 2)] ?? Number.NaN;
    const spread = `${(us[0] ?? 0).toFixed(2)}–${(us.at(-1) ?? 0).toFixed(2)}`;
    console.log(`${median.toFixed(2).padStart(7)} µs (${spread})  ${name}`);
  }
} finally {
  db.close();
  rmSync(dir, { recursive: true, force: true });
}
