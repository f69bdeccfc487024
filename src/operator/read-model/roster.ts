import type { Db } from '../../store/database.js';

/** Fleets and drivers with their wallets. */
export class RosterReads {
  constructor(private readonly db: Db) {}

  fleets(): {
    fleetId: string;
    name: string;
    createdAt: string;
    drivers: number;
    activeDrivers: number;
    walletTotal: number;
  }[] {
    return this.db
      .prepare(
        `SELECT f.id AS fleetId, f.name, f.created_at AS createdAt,
           count(d.id) AS drivers, coalesce(sum(d.active), 0) AS activeDrivers,
           coalesce(sum(w.balance), 0) AS walletTotal
         FROM fleets f LEFT JOIN drivers d ON d.fleet_id = f.id
         LEFT JOIN wallets w ON w.driver_id = d.id
         GROUP BY f.id ORDER BY f.id`,
      )
      .all() as ReturnType<RosterReads['fleets']>;
  }

  drivers(fleetId: string | undefined): {
    driverId: string;
    fleetId: string;
    email: string;
    active: boolean;
    vehicleModel: string | null;
    vehicleBatteryWh: number | null;
    balance: number;
    openSessionId: string | null;
  }[] {
    const rows = this.db
      .prepare(
        `SELECT d.id AS driverId, d.fleet_id AS fleetId, d.email, d.active,
           d.vehicle_model AS vehicleModel, d.vehicle_battery_wh AS vehicleBatteryWh,
           coalesce(w.balance, 0) AS balance,
           (SELECT s.id FROM sessions s WHERE s.driver_id = d.id
              AND s.state IN ('authorizing', 'authorized', 'charging', 'stopping')
              ORDER BY s.created_at DESC LIMIT 1) AS openSessionId
         FROM drivers d LEFT JOIN wallets w ON w.driver_id = d.id
         ${fleetId === undefined ? '' : 'WHERE d.fleet_id = @fleetId'}
         ORDER BY d.fleet_id, d.id`,
      )
      .all(fleetId === undefined ? {} : { fleetId }) as (Omit<
      ReturnType<RosterReads['drivers']>[number],
      'active'
    > & { active: number })[];
    return rows.map((r) => ({ ...r, active: r.active === 1 }));
  }
}
