import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import type { OperatorOverride, OverridePersistence } from './limit-board.js';

interface Row {
  node_id: string;
  watts: number;
  reason: string;
  expires_at_ms: number | null;
  set_by: string;
  set_at_ms: number;
}

/** The operator's power limits in SQLite (site_power_overrides). */
export class OverrideStore implements OverridePersistence {
  private readonly all: Statement<[], Row>;
  private readonly upsert: Statement<[string, number, string, number | null, string, number]>;
  private readonly del: Statement<[string]>;

  constructor(db: Db) {
    this.all = db.prepare('SELECT * FROM site_power_overrides ORDER BY node_id');
    this.upsert = db.prepare(
      `INSERT INTO site_power_overrides (node_id, watts, reason, expires_at_ms, set_by, set_at_ms)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (node_id) DO UPDATE SET watts = excluded.watts, reason = excluded.reason,
         expires_at_ms = excluded.expires_at_ms, set_by = excluded.set_by, set_at_ms = excluded.set_at_ms`,
    );
    this.del = db.prepare('DELETE FROM site_power_overrides WHERE node_id = ?');
  }

  load(): OperatorOverride[] {
    return this.all.all().map((r) => ({
      nodeId: r.node_id,
      watts: r.watts,
      reason: r.reason,
      expiresAtMs: r.expires_at_ms,
      setBy: r.set_by,
      setAtMs: r.set_at_ms,
    }));
  }

  save(o: OperatorOverride): void {
    this.upsert.run(o.nodeId, o.watts, o.reason, o.expiresAtMs, o.setBy, o.setAtMs);
  }

  remove(nodeId: string): void {
    this.del.run(nodeId);
  }
}
