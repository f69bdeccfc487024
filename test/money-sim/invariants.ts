import { formatLedgerReport, verifyLedger } from '../../src/cli/offline/verify-ledger.js';
import { DRIVERS } from '../helpers/gateway.js';
import { costOf, DRIVER_KEYS, OPEN_PHASES, type Phase } from './model.js';
import type { World } from './world.js';

interface SessionRow {
  id: string;
  state: string;
  amount: number;
  delivered_wh: number | null;
  cost: number | null;
  credited: number | null;
}

/** DB states each model phase allows ("stopping" is the gateway's own paid-energy stop). */
const STATES: Record<Phase, readonly string[]> = {
  pending: ['authorizing'],
  orphaned: ['authorizing'],
  authorized: ['authorized'],
  charging: ['charging', 'stopping'],
  settled: ['settled'],
  refunded: ['refunded'],
};

const RANK: Record<string, number> = {
  authorizing: 0,
  authorized: 1,
  charging: 2,
  stopping: 3,
  settled: 4,
  refunded: 4,
};

/**
 * Every invariant of the money path, checked on the real store after every step; throws with
 * what differs. `seen` carries each session's last state between steps (states only move on).
 */
export function checkInvariants(w: World, seen: Map<string, string>): void {
  const problems: string[] = [];
  const report = verifyLedger(w.db);
  if (!report.ok) problems.push(formatLedgerReport(report));

  for (const driver of DRIVER_KEYS) {
    const row = w.db
      .prepare('SELECT balance FROM wallets WHERE driver_id = ?')
      .get(DRIVERS[driver].id) as { balance: number };
    if (row.balance !== w.model.balances[driver]) {
      problems.push(`${driver}: balance ${row.balance}, model says ${w.model.balances[driver]}`);
    }
  }

  const rows = w.db.prepare('SELECT * FROM sessions').all() as SessionRow[];
  if (rows.length !== w.model.sessions.length) {
    problems.push(`${rows.length} sessions in the store, model knows ${w.model.sessions.length}`);
  }
  const byId = new Map(rows.map((r) => [r.id, r]));
  let held = 0;
  for (const s of w.model.sessions) {
    const row = byId.get(s.id);
    const name = `session #${s.n} (${s.connector.charger}/${s.connector.connectorId}, ${s.amount} NGN)`;
    if (!row) {
      problems.push(`${name} missing from the store`);
      continue;
    }
    if (OPEN_PHASES.has(s.phase)) held += s.amount;
    if (!STATES[s.phase].includes(row.state)) {
      problems.push(`${name} is ${row.state}, model says ${s.phase}`);
    }
    const before = seen.get(s.id);
    if (before !== undefined && (RANK[row.state] ?? -1) < (RANK[before] ?? -1)) {
      problems.push(`${name} went back from ${before} to ${row.state}`);
    }
    if (before === 'settled' || before === 'refunded') {
      if (row.state !== before) problems.push(`${name} left terminal state ${before}`);
    }
    seen.set(s.id, row.state);
    if (s.phase === 'settled' && s.settled) {
      const want = s.settled;
      if (
        row.delivered_wh !== want.deliveredWh ||
        row.cost !== want.cost ||
        row.credited !== want.credited
      ) {
        problems.push(
          `${name} settled ${row.delivered_wh} Wh cost ${row.cost} credited ${row.credited}; ` +
            `model: ${want.deliveredWh} Wh cost ${want.cost} credited ${want.credited}`,
        );
      }
      // The driver is never charged for energy the charger did not really deliver.
      if ((row.cost ?? 0) > costOf(want.trueWh, s.micro)) {
        problems.push(`${name} cost ${row.cost} for ${want.trueWh} Wh really delivered`);
      }
      if ((row.cost ?? 0) > s.amount || row.credited !== s.amount - (row.cost ?? 0)) {
        problems.push(`${name} cost ${row.cost} / credited ${row.credited} of ${s.amount}`);
      }
    }
  }
  if (report.heldAmount !== held) {
    problems.push(`store holds ${report.heldAmount} NGN for open sessions, model ${held}`);
  }
  if (problems.length > 0) throw new Error(`invariant broken:\n  ${problems.join('\n  ')}`);
}
