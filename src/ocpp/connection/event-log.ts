import type { Statement } from 'better-sqlite3';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/log.js';
import type { Db } from '../../store/database.js';
import { relaxed } from '../../store/durability.js';

/**
 * What a charger said that we answered but did not act on, or that was odd (unknown transaction,
 * replayed start, register going backwards...). Kept in SQLite for the operator, and logged.
 * A note is not money: it is committed without an fsync (store/durability.ts), which a site's
 * reconnect storm, one note per charger's configuration, would otherwise wait on.
 */
export class OcppEventLog {
  private readonly insert: Statement<[string, string, string, string | null, string]>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.insert = db.prepare(
      'INSERT INTO ocpp_events (charger_id, action, note, payload, at) VALUES (?, ?, ?, ?, ?)',
    );
  }

  record(chargerId: string, action: string, note: string, payload?: unknown): void {
    const json = payload === undefined ? null : JSON.stringify(payload);
    const at = new Date(this.clock.now()).toISOString();
    relaxed(this.db, () => this.insert.run(chargerId, action, note, json, at));
    this.log.info({ chargerId, action, note }, 'ocpp event recorded');
  }
}
