import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/database.js';
import { perDatabase } from '../../store/per-database.js';

/**
 * Chargers that meter only Energy.Active.Import.Interval (energy since the previous sample) give
 * no register; the register the gateway settles on is the transaction's start plus the sum of its
 * intervals. A sample whose timestamp is not after the last one added (sent again after a lost
 * reply, or out of order) adds nothing.
 */
export class IntervalEnergy {
  /** Shared by every connection: it holds only prepared statements. */
  static readonly of = perDatabase((db) => new IntervalEnergy(db));

  private readonly find: Statement<[string, string], { sum_wh: number; last_timestamp: string }>;
  private readonly put: Statement<[string, string, number, string]>;

  constructor(db: Db) {
    this.find = db.prepare(
      `SELECT sum_wh, last_timestamp FROM transaction_interval_energy
       WHERE charger_id = ? AND transaction_ref = ?`,
    );
    this.put = db.prepare(
      `INSERT INTO transaction_interval_energy (charger_id, transaction_ref, sum_wh, last_timestamp)
       VALUES (?, ?, ?, ?)
       ON CONFLICT (charger_id, transaction_ref) DO UPDATE SET sum_wh = excluded.sum_wh,
         last_timestamp = excluded.last_timestamp`,
    );
  }

  /** Adds one sample's interval energy; returns the register: start plus all intervals so far. */
  register(
    chargerId: string,
    transactionRef: string,
    startWh: number,
    timestamp: string,
    intervalWh: number,
  ): number {
    const row = this.find.get(chargerId, transactionRef);
    let sum = row?.sum_wh ?? 0;
    const after = !row || Date.parse(timestamp) > Date.parse(row.last_timestamp);
    if (after && intervalWh >= 0) {
      sum += intervalWh;
      this.put.run(chargerId, transactionRef, sum, timestamp);
    }
    return Math.round(startWh + sum);
  }
}
