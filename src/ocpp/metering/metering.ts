import type { Statement } from 'better-sqlite3';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../store/database.js';
import { relaxed } from '../../store/durability.js';
import { ENERGY_INTERVAL, ENERGY_REGISTER } from './meter-reading.js';
import type { MeteringCapability } from '../port.js';

interface Row {
  measurands: string;
  energy: 'register' | 'interval' | 'none';
}

/** What energy reading a list of measurands gives the gateway during a transaction. */
export function energyOf(measurands: string[]): 'register' | 'interval' | 'none' {
  if (measurands.includes(ENERGY_REGISTER)) return 'register';
  if (measurands.includes(ENERGY_INTERVAL)) return 'interval';
  return 'none';
}

/** Splits a measurand list as chargers write it ("A, B,C"). */
export function measurandList(value: string): string[] {
  return value
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
}

/**
 * The measurands each charger said (read back after configuring them) it will send during a
 * transaction. A charger never read back is `unknown`: it is given the benefit of the doubt.
 */
export class ChargerMetering {
  private readonly upsert: Statement<[string, string, string, string]>;
  private readonly byCharger: Statement<[string], Row>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.upsert = db.prepare(
      `INSERT INTO charger_metering (charger_id, measurands, energy, recorded_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (charger_id) DO UPDATE SET measurands = excluded.measurands,
         energy = excluded.energy, recorded_at = excluded.recorded_at`,
    );
    this.byCharger = db.prepare(
      'SELECT measurands, energy FROM charger_metering WHERE charger_id = ?',
    );
  }

  /**
   * Records what the charger read back at its boot; false when it is what was recorded before
   * (every reconnect reads it back: a site's restart would otherwise rewrite every row).
   */
  record(chargerId: string, measurands: string[]): boolean {
    const list = measurands.join(',');
    if (this.byCharger.get(chargerId)?.measurands === list) return false;
    const at = new Date(this.clock.now()).toISOString();
    relaxed(this.db, () => this.upsert.run(chargerId, list, energyOf(measurands), at));
    return true;
  }

  capability(chargerId: string): MeteringCapability {
    return this.byCharger.get(chargerId)?.energy ?? 'unknown';
  }
}
