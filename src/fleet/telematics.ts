import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';

export interface TelematicsSoc {
  socPercent: number;
  /** When the vehicle measured it (the fleet's clock). */
  measuredAt: string;
}

/** The fleet's last telematics state of charge of each driver's assigned vehicle. */
export class Telematics {
  private readonly upsertStmt: Statement<[string, number, string, string]>;
  private readonly getStmt: Statement<[string], { soc_percent: number; measured_at: string }>;

  constructor(db: Db) {
    // A reading older than the one held (telematics replayed out of order) is ignored.
    this.upsertStmt = db.prepare(
      `INSERT INTO driver_telematics (driver_id, soc_percent, measured_at, received_at)
       VALUES (?, ?, ?, ?)
       ON CONFLICT (driver_id) DO UPDATE SET soc_percent = excluded.soc_percent,
         measured_at = excluded.measured_at, received_at = excluded.received_at
       WHERE excluded.measured_at > measured_at`,
    );
    this.getStmt = db.prepare(
      'SELECT soc_percent, measured_at FROM driver_telematics WHERE driver_id = ?',
    );
  }

  /** Returns false when a newer reading was already held. `measuredAt` is ISO 8601 UTC. */
  record(driverId: string, socPercent: number, measuredAt: string, at: string): boolean {
    return this.upsertStmt.run(driverId, socPercent, measuredAt, at).changes === 1;
  }

  latest(driverId: string): TelematicsSoc | undefined {
    const row = this.getStmt.get(driverId);
    return row ? { socPercent: row.soc_percent, measuredAt: row.measured_at } : undefined;
  }
}
