import type { Statement } from 'better-sqlite3';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';

/**
 * What a charger said that we answered but did not act on, or that was odd (unknown transaction,
 * replayed start, register going backwards...). Kept in SQLite for the operator, and logged.
 */
export class OcppEventLog {
  private readonly insert: Statement<[string, string, string, string | null, string]>;

  constructor(
    db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.insert = db.prepare(
      'INSERT INTO ocpp_events (charger_id, action, note, payload, at) VALUES (?, ?, ?, ?, ?)',
    );
  }

  record(chargerId: string, action: string, note: string, payload?: unknown): void {
    this.insert.run(
      chargerId,
      action,
      note,
      payload === undefined ? null : JSON.stringify(payload),
      new Date(this.clock.now()).toISOString(),
    );
    this.log.info({ chargerId, action, note }, 'ocpp event recorded');
  }
}
