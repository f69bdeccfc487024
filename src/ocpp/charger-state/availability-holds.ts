import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/database.js';
import { WHOLE_CHARGER } from './connector-state.js';

export interface AvailabilityIntent {
  chargerId: string;
  /** WHOLE_CHARGER for the charger as a whole. */
  connectorId: string;
  operative: boolean;
  reason: string | null;
  setBy: string;
  setAt: string;
}

interface Row {
  charger_id: string;
  connector_id: string;
  operative: number;
  reason: string | null;
  set_by: string;
  set_at: string;
}

const toIntent = (r: Row): AvailabilityIntent => ({
  chargerId: r.charger_id,
  connectorId: r.connector_id,
  operative: r.operative === 1,
  reason: r.reason,
  setBy: r.set_by,
  setAt: r.set_at,
});

/**
 * What the operator last decided about each connector's availability. The database is the truth
 * (it survives restarts); a charger that reboots is told again.
 */
export class AvailabilityHolds {
  private readonly upsert: Statement<[string, string, number, string | null, string, string]>;
  private readonly ofCharger: Statement<[string], Row>;
  private readonly one: Statement<[string, string], Row>;
  /**
   * Chargers with any recorded intent. Nearly every charger has none, and each boot (thousands
   * in a reconnect storm) and each Start asks: those are answered without a query. Every write
   * goes through `record` in this process, which keeps the set true.
   */
  private readonly withIntent: Set<string>;

  constructor(db: Db) {
    this.upsert = db.prepare(
      `INSERT INTO operator_availability (charger_id, connector_id, operative, reason, set_by, set_at)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (charger_id, connector_id) DO UPDATE SET operative = excluded.operative,
         reason = excluded.reason, set_by = excluded.set_by, set_at = excluded.set_at`,
    );
    this.ofCharger = db.prepare(
      'SELECT * FROM operator_availability WHERE charger_id = ? ORDER BY connector_id',
    );
    this.one = db.prepare(
      'SELECT * FROM operator_availability WHERE charger_id = ? AND connector_id = ?',
    );
    this.withIntent = new Set(
      db
        .prepare<[], { charger_id: string }>(
          'SELECT DISTINCT charger_id FROM operator_availability',
        )
        .all()
        .map((r) => r.charger_id),
    );
  }

  record(intent: AvailabilityIntent): void {
    this.withIntent.add(intent.chargerId);
    this.upsert.run(
      intent.chargerId,
      intent.connectorId,
      intent.operative ? 1 : 0,
      intent.reason,
      intent.setBy,
      intent.setAt,
    );
  }

  of(chargerId: string): AvailabilityIntent[] {
    if (!this.withIntent.has(chargerId)) return [];
    return this.ofCharger.all(chargerId).map(toIntent);
  }

  /** Why a connector may not take a new session (the whole charger's hold first), or null. */
  hold(chargerId: string, connectorId: string): string | null {
    if (!this.withIntent.has(chargerId)) return null;
    for (const target of [WHOLE_CHARGER, connectorId]) {
      const row = this.one.get(chargerId, target);
      if (row && row.operative === 0) {
        const what =
          target === WHOLE_CHARGER
            ? `charger ${chargerId}`
            : `connector ${connectorId} on charger ${chargerId}`;
        const why = row.reason ? `: ${row.reason}` : '';
        return `${what} was taken out of service by operator ${row.set_by} at ${row.set_at}${why}`;
      }
    }
    return null;
  }
}
