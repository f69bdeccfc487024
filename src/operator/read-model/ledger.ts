import type { Db } from '../../store/database.js';
import { allPages, bind, where, type Page } from './query.js';

export interface LedgerFilter {
  driverId?: string | undefined;
  fleetId?: string | undefined;
  kind?: string | undefined;
  sessionId?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export interface LedgerRow {
  seq: number;
  id: string;
  driverId: string;
  fleetId: string;
  kind: string;
  amount: number;
  balanceAfter: number;
  sessionId: string | null;
  reference: string | null;
  createdAt: string;
  actor: string | null;
  reason: string | null;
}

function ledgerWhere(f: LedgerFilter, params: Record<string, unknown>): string[] {
  const parts: string[] = [];
  bind(params, parts, 'l.driver_id = @driverId', 'driverId', f.driverId);
  bind(params, parts, 'd.fleet_id = @fleetId', 'fleetId', f.fleetId);
  bind(params, parts, 'l.kind = @kind', 'kind', f.kind);
  bind(params, parts, 'l.session_id = @sessionId', 'sessionId', f.sessionId);
  bind(params, parts, 'l.created_at >= @from', 'from', f.from);
  bind(params, parts, 'l.created_at < @to', 'to', f.to);
  return parts;
}

type LedgerDbRow = {
  seq: number;
  id: string;
  driver_id: string;
  fleet_id: string;
  kind: string;
  amount: number;
  balance_after: number;
  session_id: string | null;
  reference: string | null;
  created_at: string;
  actor: string | null;
  reason: string | null;
};

function toLedgerRow(r: LedgerDbRow): LedgerRow {
  return {
    seq: r.seq,
    id: r.id,
    driverId: r.driver_id,
    fleetId: r.fleet_id,
    kind: r.kind,
    amount: r.amount,
    balanceAfter: r.balance_after,
    sessionId: r.session_id,
    reference: r.reference,
    createdAt: r.created_at,
    actor: r.actor,
    reason: r.reason,
  };
}

/**
 * The operator's reads of the site, straight from SQLite (read-only). Pages run newest first on

/** The ledger with each entry's fleet and the operator's note, newest first. */
export class LedgerReads {
  constructor(private readonly db: Db) {}

  page(f: LedgerFilter, before: number | undefined, limit: number): Page<LedgerRow> {
    const params: Record<string, unknown> = { limit };
    const parts = ledgerWhere(f, params);
    bind(params, parts, 'l.seq < @before', 'before', before);
    const rows = this.db
      .prepare(
        `SELECT l.seq, l.id, l.driver_id, d.fleet_id, l.kind, l.amount, l.balance_after,
           l.session_id, l.reference, l.created_at, n.actor, n.reason
         FROM ledger_entries l JOIN drivers d ON d.id = l.driver_id
         LEFT JOIN ledger_notes n ON n.entry_id = l.id
         ${where(parts)} ORDER BY l.seq DESC LIMIT @limit`,
      )
      .all(params) as LedgerDbRow[];
    const last = rows.at(-1);
    return {
      items: rows.map(toLedgerRow),
      nextCursor: rows.length === limit && last ? String(last.seq) : null,
    };
  }

  *all(f: LedgerFilter, chunk = 500): Generator<LedgerRow[]> {
    yield* allPages((before) => this.page(f, before, chunk));
  }
}
