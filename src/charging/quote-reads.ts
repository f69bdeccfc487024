import type { Statement } from 'better-sqlite3';
import { toDriver, type Driver, type DriverRow } from '../fleet/roster.js';
import type { TelematicsSoc } from '../fleet/telematics.js';
import type { Db } from '../store/database.js';

/** What a quote knows of its driver before it looks at the connector. */
export interface QuoteDriver {
  driver: Driver;
  /** Null when the driver has no wallet (the quote then fails as wallet.balance() would). */
  balance: number | null;
  /** The fleet's last telematics SoC of the driver's vehicle, however old. */
  telematics: TelematicsSoc | undefined;
}

interface Row extends DriverRow {
  balance: number | null;
  soc_percent: number | null;
  measured_at: string | null;
}

/**
 * The driver's row, wallet balance and telematics SoC in one statement, read only. A quote is the
 * API's hottest path, and each SQLite statement outside a transaction opens and closes its own
 * read (two file-lock calls, and the first statement of a request runs on cold caches): three
 * reads here cost about three times this one (npm run bench, docs/benchmarks.md).
 */
export class QuoteReads {
  private readonly stmt: Statement<[string], Row>;

  constructor(db: Db) {
    this.stmt = db.prepare(
      // Scalar subqueries, not LEFT JOINs: the joined form measured 13 µs a read, this 2 µs.
      `SELECT d.*,
         (SELECT balance FROM wallets WHERE driver_id = d.id) AS balance,
         (SELECT soc_percent FROM driver_telematics WHERE driver_id = d.id) AS soc_percent,
         (SELECT measured_at FROM driver_telematics WHERE driver_id = d.id) AS measured_at
       FROM drivers d WHERE d.id = ?`,
    );
  }

  read(driverId: string): QuoteDriver | undefined {
    const row = this.stmt.get(driverId);
    if (!row) return undefined;
    return {
      driver: toDriver(row),
      balance: row.balance,
      telematics:
        row.soc_percent === null || row.measured_at === null
          ? undefined
          : { socPercent: row.soc_percent, measuredAt: row.measured_at },
    };
  }
}
