import { SESSION_STATES } from '../../charging/session-store.js';
import type { Db } from '../../store/database.js';

export interface CheckResult {
  name: string;
  violations: string[];
}

export interface LedgerReport {
  checks: CheckResult[];
  wallets: number;
  entries: number;
  /** Every session state, those with no session included (0). */
  sessionsByState: Record<string, number>;
  /** Money debited for sessions that have no outcome yet. */
  heldAmount: number;
  /** Sum of all wallet balances. */
  totalBalance: number;
  /** Money that came into the wallets: opening balances, top-ups and adjustments. */
  moneyIn: number;
  /** What settled sessions cost their drivers. */
  spent: number;
  ok: boolean;
}

function check(
  name: string,
  db: Db,
  sql: string,
  describe: (row: Record<string, unknown>) => string,
): CheckResult {
  const rows = db.prepare(sql).all() as Record<string, unknown>[];
  return {
    name,
    violations: rows
      .slice(0, 20)
      .map(describe)
      .concat(rows.length > 20 ? [`... and ${rows.length - 20} more`] : []),
  };
}

/** Re-derives every wallet invariant from the raw tables (DESIGN.md §2). Read-only. */
export function verifyLedger(db: Db): LedgerReport {
  const checks: CheckResult[] = [
    check(
      'no wallet balance below zero',
      db,
      'SELECT driver_id, balance FROM wallets WHERE balance < 0',
      (r) => `wallet ${String(r.driver_id)} balance ${String(r.balance)}`,
    ),
    check(
      'every balance equals the sum of its ledger entries',
      db,
      `SELECT w.driver_id, w.balance, COALESCE(SUM(l.amount), 0) AS total
       FROM wallets w LEFT JOIN ledger_entries l ON l.driver_id = w.driver_id
       GROUP BY w.driver_id HAVING w.balance <> total`,
      (r) =>
        `wallet ${String(r.driver_id)} balance ${String(r.balance)} but entries sum to ${String(r.total)}`,
    ),
    check(
      'every entry’s balance_after is the running sum of its wallet',
      db,
      `SELECT id, driver_id, balance_after, running FROM (
         SELECT id, driver_id, balance_after,
           SUM(amount) OVER (PARTITION BY driver_id ORDER BY seq) AS running
         FROM ledger_entries) WHERE balance_after <> running`,
      (r) =>
        `entry ${String(r.id)} says ${String(r.balance_after)}, running sum ${String(r.running)}`,
    ),
    check(
      'every session has exactly one debit of its amount',
      db,
      `SELECT s.id, s.amount, COUNT(l.seq) AS n, COALESCE(SUM(-l.amount), 0) AS debited
       FROM sessions s LEFT JOIN ledger_entries l ON l.session_id = s.id AND l.kind = 'session_debit'
       GROUP BY s.id HAVING n <> 1 OR debited <> s.amount`,
      (r) =>
        `session ${String(r.id)}: ${String(r.n)} debits totalling ${String(r.debited)}, amount ${String(r.amount)}`,
    ),
    check(
      'every ended session has exactly one outcome, and open sessions none',
      db,
      `SELECT s.id, s.state,
         SUM(l.kind = 'session_refund') AS refunds, SUM(l.kind = 'session_credit') AS credits
       FROM sessions s LEFT JOIN ledger_entries l ON l.session_id = s.id
       GROUP BY s.id
       HAVING (s.state = 'settled' AND (credits <> 1 OR refunds <> 0))
           OR (s.state = 'refunded' AND (refunds <> 1 OR credits <> 0))
           OR (s.state NOT IN ('settled', 'refunded') AND (refunds + credits) <> 0)`,
      (r) =>
        `session ${String(r.id)} (${String(r.state)}): ${String(r.refunds)} refunds, ${String(r.credits)} credits`,
    ),
    check(
      'refunds give back the whole debit',
      db,
      `SELECT s.id, s.amount, l.amount AS refunded FROM sessions s
       JOIN ledger_entries l ON l.session_id = s.id AND l.kind = 'session_refund'
       WHERE l.amount <> s.amount`,
      (r) => `session ${String(r.id)} refunded ${String(r.refunded)} of ${String(r.amount)}`,
    ),
    check(
      'settlements credit exactly amount minus cost',
      db,
      `SELECT s.id, s.amount, s.cost, s.credited, l.amount AS credit FROM sessions s
       JOIN ledger_entries l ON l.session_id = s.id AND l.kind = 'session_credit'
       WHERE s.cost IS NULL OR l.amount <> s.amount - s.cost OR l.amount <> s.credited`,
      (r) =>
        `session ${String(r.id)} credited ${String(r.credit)}, amount ${String(r.amount)} cost ${String(r.cost)}`,
    ),
    check(
      'every session entry is on the wallet of the session’s driver',
      db,
      `SELECT l.id, l.kind, l.driver_id, s.id AS session_id, s.driver_id AS owner
       FROM ledger_entries l JOIN sessions s ON s.id = l.session_id
       WHERE l.driver_id <> s.driver_id`,
      (r) =>
        `${String(r.kind)} ${String(r.id)} of session ${String(r.session_id)} (driver ${String(r.owner)}) is on wallet ${String(r.driver_id)}`,
    ),
    check(
      'every session entry names an existing session',
      db,
      `SELECT l.id, l.kind, l.session_id FROM ledger_entries l
       WHERE l.kind LIKE 'session_%' AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = l.session_id)`,
      (r) => `${String(r.kind)} ${String(r.id)} names no session (${String(r.session_id)})`,
    ),
    check(
      'every idempotency key is bound to a debited session of its own driver',
      db,
      `SELECT k.driver_id, k.key, k.session_id FROM idempotency_keys k
       LEFT JOIN sessions s ON s.id = k.session_id
       WHERE s.id IS NULL OR s.driver_id <> k.driver_id`,
      (r) =>
        `key ${String(r.key)} of driver ${String(r.driver_id)} names session ${String(r.session_id)}`,
    ),
    check(
      'money in = what the wallets hold + held by open sessions + spent on settled ones',
      db,
      `SELECT money_in, balances, held, spent FROM (SELECT
         (SELECT COALESCE(SUM(amount), 0) FROM ledger_entries
            WHERE kind IN ('opening', 'top_up', 'adjustment')) AS money_in,
         (SELECT COALESCE(SUM(balance), 0) FROM wallets) AS balances,
         (SELECT COALESCE(SUM(amount), 0) FROM sessions
            WHERE state NOT IN ('settled', 'refunded')) AS held,
         (SELECT COALESCE(SUM(cost), 0) FROM sessions WHERE state = 'settled') AS spent)
       WHERE money_in <> balances + held + spent`,
      (r) =>
        `money in ${String(r.money_in)} NGN but balances ${String(r.balances)} + held ${String(r.held)} + spent ${String(r.spent)}`,
    ),
    check(
      'no settled cost exceeds what was paid for the energy delivered',
      db,
      `SELECT id, cost, delivered_wh, price_micro_ngn_per_wh FROM sessions
       WHERE state = 'settled' AND cost > (delivered_wh * price_micro_ngn_per_wh) / 1000000`,
      (r) => `session ${String(r.id)} cost ${String(r.cost)} for ${String(r.delivered_wh)} Wh`,
    ),
  ];

  const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
  const sessionsByState: Record<string, number> = Object.fromEntries(
    SESSION_STATES.map((state) => [state, 0]),
  );
  for (const row of db
    .prepare('SELECT state, COUNT(*) AS n FROM sessions GROUP BY state')
    .all() as {
    state: string;
    n: number;
  }[]) {
    sessionsByState[row.state] = row.n;
  }
  return {
    checks,
    wallets: count('SELECT COUNT(*) AS n FROM wallets'),
    entries: count('SELECT COUNT(*) AS n FROM ledger_entries'),
    sessionsByState,
    heldAmount: count(
      `SELECT COALESCE(SUM(amount), 0) AS n FROM sessions
       WHERE state IN ('authorizing', 'authorized', 'charging', 'stopping')`,
    ),
    totalBalance: count('SELECT COALESCE(SUM(balance), 0) AS n FROM wallets'),
    moneyIn: count(
      `SELECT COALESCE(SUM(amount), 0) AS n FROM ledger_entries
       WHERE kind IN ('opening', 'top_up', 'adjustment')`,
    ),
    spent: count("SELECT COALESCE(SUM(cost), 0) AS n FROM sessions WHERE state = 'settled'"),
    ok: checks.every((c) => c.violations.length === 0),
  };
}

const ngn = (n: number) => `${n.toLocaleString('en-US')} NGN`;

export function formatLedgerReport(report: LedgerReport): string {
  const lines: string[] = [];
  for (const c of report.checks) {
    lines.push(`${c.violations.length === 0 ? 'ok  ' : 'FAIL'} ${c.name}`);
    for (const v of c.violations) lines.push(`       ${v}`);
  }
  const states = Object.entries(report.sessionsByState)
    .map(([state, n]) => `${state} ${n}`)
    .join(', ');
  const sessions = Object.values(report.sessionsByState).reduce((a, b) => a + b, 0);
  const open = SESSION_STATES.slice(0, 4).reduce(
    (n, state) => n + (report.sessionsByState[state] ?? 0),
    0,
  );
  lines.push(
    '',
    `wallets ${report.wallets}, ledger entries ${report.entries}, sessions ${sessions}`,
    `  sessions by state: ${states}`,
    `  money in (opening, top-ups, adjustments): ${ngn(report.moneyIn)}`,
    `  in wallets now:                           ${ngn(report.totalBalance)}`,
    `  held by open sessions:                    ${ngn(report.heldAmount)} (${open} open)`,
    `  spent on settled sessions:                ${ngn(report.spent)}`,
  );
  lines.push(report.ok ? 'ledger verified: all invariants hold' : 'ledger verification FAILED');
  return lines.join('\n');
}
