import type { Statement } from 'better-sqlite3';
import { atomic } from '../../store/atomic.js';
import type { Db } from '../../store/database.js';
import { applied, type KeyedEntry, type PlannedUpdate } from './list-plan.js';

/** What a charger's list holds as far as the gateway knows (migration 029). */
export interface HeldList {
  version: number;
  /** Its list is not known to be `entries`: the next update is a full one. */
  fullWanted: boolean;
  entries: Map<string, KeyedEntry>;
}

interface EntryRow {
  token_key: string;
  token_value: string;
  token_type: string;
  status: 'accepted' | 'blocked';
  expires_at: string | null;
}

/**
 * The chargers' lists as last accepted, versions and entries, in SQLite; a list is read once and
 * kept in memory beside it, so a round compares without reading. Each accepted update is written
 * with its version in one transaction.
 */
export class LocalListStore {
  private readonly cache = new Map<string, HeldList | null>();
  private readonly listStmt: Statement<[string], { version: number; full_wanted: number }>;
  private readonly entriesStmt: Statement<[string], EntryRow>;
  private readonly upsertStmt: Statement<[string, number, number, string]>;
  private readonly clearStmt: Statement<[string]>;
  private readonly deleteStmt: Statement<[string, string]>;
  private readonly putStmt: Statement<[string, string, string, string, string, string | null]>;

  constructor(
    private readonly db: Db,
    private readonly now: () => string,
  ) {
    this.listStmt = db.prepare('SELECT version, full_wanted FROM local_lists WHERE charger_id = ?');
    this.entriesStmt = db.prepare(
      `SELECT token_key, token_value, token_type, status, expires_at
       FROM local_list_entries WHERE charger_id = ?`,
    );
    this.upsertStmt = db.prepare(
      `INSERT INTO local_lists (charger_id, version, full_wanted, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (charger_id) DO UPDATE SET version = excluded.version,
         full_wanted = excluded.full_wanted, updated_at = excluded.updated_at`,
    );
    this.clearStmt = db.prepare('DELETE FROM local_list_entries WHERE charger_id = ?');
    this.deleteStmt = db.prepare(
      'DELETE FROM local_list_entries WHERE charger_id = ? AND token_key = ?',
    );
    this.putStmt = db.prepare(
      `INSERT OR REPLACE INTO local_list_entries
         (charger_id, token_key, token_value, token_type, status, expires_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
  }

  /** The charger's list, or null when it was never sent one. */
  held(chargerId: string): HeldList | null {
    const cached = this.cache.get(chargerId);
    if (cached !== undefined) return cached;
    const list = this.listStmt.get(chargerId);
    const held: HeldList | null = list
      ? {
          version: list.version,
          fullWanted: list.full_wanted === 1,
          entries: new Map(
            this.entriesStmt.all(chargerId).map((r) => [
              r.token_key,
              {
                key: r.token_key,
                value: r.token_value,
                type: r.token_type,
                status: r.status,
                expiresAt: r.expires_at,
              },
            ]),
          ),
        }
      : null;
    this.cache.set(chargerId, held);
    return held;
  }

  /** The charger's list is not known (a reboot, a version mismatch, a failed update). */
  wantFull(chargerId: string): void {
    const held = this.held(chargerId);
    if (held === null || held.fullWanted) return;
    this.upsertStmt.run(chargerId, held.version, 1, this.now());
    held.fullWanted = true;
  }

  /** The charger accepted `update` as list version `version`. */
  accepted(chargerId: string, update: PlannedUpdate, version: number): void {
    const before = this.held(chargerId);
    // A full update is followed by its differential parts: the list is known once the first is in.
    const fullWanted = update.kind === 'full' ? false : (before?.fullWanted ?? true);
    atomic(this.db, () => {
      this.upsertStmt.run(chargerId, version, fullWanted ? 1 : 0, this.now());
      if (update.kind === 'full') this.clearStmt.run(chargerId);
      for (const e of update.remove) this.deleteStmt.run(chargerId, e.key);
      for (const e of update.put) {
        this.putStmt.run(chargerId, e.key, e.value, e.type, e.status, e.expiresAt);
      }
    });
    this.cache.set(chargerId, {
      version,
      fullWanted,
      entries: applied(before?.entries ?? new Map(), update),
    });
  }
}
