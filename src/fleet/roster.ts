import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';

export interface Driver {
  id: string;
  fleetId: string;
  email: string;
  active: boolean;
  vehicleModel: string | null;
  vehicleBatteryWh: number | null;
}

export interface DriverRow {
  id: string;
  fleet_id: string;
  email: string;
  active: number;
  vehicle_model: string | null;
  vehicle_battery_wh: number | null;
}

/** Emails are compared case-insensitively after trimming (DESIGN.md §3). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function toDriver(row: DriverRow): Driver {
  return {
    id: row.id,
    fleetId: row.fleet_id,
    email: row.email,
    active: row.active === 1,
    vehicleModel: row.vehicle_model,
    vehicleBatteryWh: row.vehicle_battery_wh,
  };
}

export interface DriverInput {
  id: string;
  fleetId: string;
  email: string;
  active: boolean;
  vehicleModel: string | null;
  vehicleBatteryWh: number | null;
}

/** Fleets and their drivers as mirrored at this site. */
export class Roster {
  private readonly byIdStmt: Statement<[string], DriverRow>;
  private readonly byEmailStmt: Statement<[string, string], DriverRow>;
  private readonly upsertFleetStmt: Statement<[string, string, string]>;
  private readonly fleetStmt: Statement<[string], { id: string }>;
  private readonly upsertDriverStmt: Statement<
    [string, string, string, number, string | null, number | null, string, string]
  >;

  constructor(private readonly db: Db) {
    this.byIdStmt = db.prepare('SELECT * FROM drivers WHERE id = ?');
    this.byEmailStmt = db.prepare('SELECT * FROM drivers WHERE fleet_id = ? AND email = ?');
    this.fleetStmt = db.prepare('SELECT id FROM fleets WHERE id = ?');
    this.upsertFleetStmt = db.prepare(
      `INSERT INTO fleets (id, name, created_at) VALUES (?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET name = excluded.name WHERE name IS NOT excluded.name`,
    );
    this.upsertDriverStmt = db.prepare(
      `INSERT INTO drivers (id, fleet_id, email, active, vehicle_model, vehicle_battery_wh, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET
         email = excluded.email, active = excluded.active, vehicle_model = excluded.vehicle_model,
         vehicle_battery_wh = excluded.vehicle_battery_wh, updated_at = excluded.updated_at
       WHERE fleet_id = excluded.fleet_id AND (email, active, vehicle_model, vehicle_battery_wh)
         IS NOT (excluded.email, excluded.active, excluded.vehicle_model, excluded.vehicle_battery_wh)`,
    );
  }

  driver(id: string): Driver | undefined {
    const row = this.byIdStmt.get(id);
    return row ? toDriver(row) : undefined;
  }

  driverByEmail(fleetId: string, email: string): Driver | undefined {
    const row = this.byEmailStmt.get(fleetId, normalizeEmail(email));
    return row ? toDriver(row) : undefined;
  }

  hasFleet(id: string): boolean {
    return this.fleetStmt.get(id) !== undefined;
  }

  /** Returns true when the fleet was created or changed. */
  upsertFleet(id: string, name: string, at: string): boolean {
    return this.upsertFleetStmt.run(id, name, at).changes > 0;
  }

  /** Deletes a fleet nothing belongs to (no driver, so no wallet or money; no API key). */
  deleteEmptyFleet(id: string): 'deleted' | 'not_found' | 'not_empty' {
    if (!this.hasFleet(id)) return 'not_found';
    const held = this.db
      .prepare<[string, string], { n: number }>(
        `SELECT (SELECT count(*) FROM drivers WHERE fleet_id = ?)
              + (SELECT count(*) FROM api_keys WHERE fleet_id = ?) AS n`,
      )
      .get(id, id);
    if ((held?.n ?? 0) > 0) return 'not_empty';
    this.db.prepare('DELETE FROM fleets WHERE id = ?').run(id);
    return 'deleted';
  }

  /** Returns true when the driver was created or changed. A driver never moves fleet. */
  upsertDriver(input: DriverInput, at: string): boolean {
    const existing = this.driver(input.id);
    if (existing && existing.fleetId !== input.fleetId) {
      throw new Error(
        `driver ${input.id} belongs to fleet ${existing.fleetId}, not ${input.fleetId}`,
      );
    }
    return (
      this.upsertDriverStmt.run(
        input.id,
        input.fleetId,
        normalizeEmail(input.email),
        input.active ? 1 : 0,
        input.vehicleModel,
        input.vehicleBatteryWh,
        at,
        at,
      ).changes > 0
    );
  }
}
