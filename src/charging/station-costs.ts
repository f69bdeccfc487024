import type { Statement } from 'better-sqlite3';
import type { StationCost } from '../ocpp/port.js';
import { costDown } from '../pricing/money.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import type { Session } from './session-store.js';

/**
 * The cost a charger computed itself (OCPP 2.1, on the session's tariff) against the gateway's
 * own for the same energy: the gateway's cost of the energy the charger priced, rounded down to
 * whole NGN as a settlement is. A difference within rounding (2 NGN plus the price of 1 Wh:
 * ROUNDING_NGN) is nothing; beyond it, the first running one and the
 * final one of a session are recorded (station_cost_differences) and logged. The gateway's
 * figure always bills (docs/money.md).
 */
export class StationCosts {
  private readonly insert: Statement<[string, string, number, number, number, string]>;

  constructor(
    db: Db,
    private readonly log: Logger,
  ) {
    this.insert = db.prepare(
      `INSERT INTO station_cost_differences
         (session_id, kind, energy_wh, station_ngn, gateway_ngn, at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (session_id, kind) DO NOTHING`,
    );
  }

  compare(s: Session, cost: StationCost, at: string): void {
    const energyWh = Math.max(0, Math.round(cost.energyWh));
    const gatewayNgn = costDown(energyWh, s.microNgnPerWh);
    if (!beyondRounding(cost.totalNgn, gatewayNgn, s.microNgnPerWh)) return;
    this.insert.run(s.id, cost.kind, energyWh, cost.totalNgn, gatewayNgn, at);
    this.log.warn(
      { sessionId: s.id, kind: cost.kind, energyWh, stationNgn: cost.totalNgn, gatewayNgn },
      "charger's own cost differs from the gateway's: recorded, not billed",
    );
  }
}

/**
 * What rounding alone can put between two costs of the same energy: each side may round up to a
 * whole naira away (the gateway down, a charger up), and a charger's energy in decimal Wh may be up
 * to 1 Wh off the gateway's whole Wh (the price of 1 Wh, added below).
 */
const ROUNDING_NGN = 2;

/** Whether two costs of the same energy differ by more than their rounding can explain. */
export function beyondRounding(stationNgn: number, gatewayNgn: number, microNgnPerWh: number) {
  return Math.abs(stationNgn - gatewayNgn) > ROUNDING_NGN + microNgnPerWh / 1_000_000;
}
