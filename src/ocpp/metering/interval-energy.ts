import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/database.js';
import { perDatabase } from '../../store/per-database.js';
import { INTERVAL_TIMINGS, type IntervalTiming } from './meter-reading.js';

/**
 * Chargers that meter only Energy.Active.Import.Interval (energy since the previous sample) give
 * no register; the register the gateway settles on is the transaction's start plus the sum of its
 * intervals. Each timing (periodic, clock-aligned, triggered: meter-reading.ts) is summed on its
 * own: a charger that reports both periodic and clock-aligned intervals reports the same energy
 * twice over the same time, so the register is the start plus the largest sum (each is a whole
 * account up to its last sample, none more than was delivered). A sample stamped as the last one
 * added to its timing is that sample again (sent again after a lost reply) and adds nothing. One
 * stamped before it is still its own interval: a charger whose clock stepped back stamps every
 * later sample before the last one, and dropping them stopped no session (a charger sends a lost
 * frame again before any later one, so an earlier stamp is never a repeat).
 *
 * A 2.0.1 station may send intervals both in its transaction's events and in MeterValues: two
 * accounts of the same energy, so each message's timings are summed apart too (its `account`) and
 * the register is the start plus the largest sum of all.
 */
export class IntervalEnergy {
  /** Shared by every connection: it holds only prepared statements. */
  static readonly of = perDatabase((db) => new IntervalEnergy(db));

  private readonly find: Statement<
    [string, string, string],
    { transaction_ref: string; timing: IntervalTiming; sum_wh: number; last_timestamp: string }
  >;
  private readonly put: Statement<[string, string, IntervalTiming, number, string]>;

  constructor(db: Db) {
    this.find = db.prepare(
      `SELECT transaction_ref, timing, sum_wh, last_timestamp FROM transaction_interval_energy
       WHERE charger_id = ? AND transaction_ref IN (?, ?)`,
    );
    this.put = db.prepare(
      `INSERT INTO transaction_interval_energy (charger_id, transaction_ref, timing, sum_wh, last_timestamp)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (charger_id, transaction_ref, timing) DO UPDATE SET sum_wh = excluded.sum_wh,
         last_timestamp = excluded.last_timestamp`,
    );
  }

  /** Adds one sample's interval energy; returns the register: start plus the largest sum so far. */
  register(
    chargerId: string,
    transactionRef: string,
    startWh: number,
    timestamp: string,
    intervals: Partial<Record<IntervalTiming, number>>,
    account: 'transaction' | 'meter-values' = 'transaction',
  ): number {
    const ref = account === 'transaction' ? transactionRef : `${transactionRef}\nMeterValues`;
    const rows = this.find.all(chargerId, transactionRef, `${transactionRef}\nMeterValues`);
    let most = Math.max(0, ...rows.filter((r) => r.transaction_ref !== ref).map((r) => r.sum_wh));
    const own = new Map(rows.filter((r) => r.transaction_ref === ref).map((r) => [r.timing, r]));
    for (const timing of INTERVAL_TIMINGS) {
      const row = own.get(timing);
      let sum = row?.sum_wh ?? 0;
      const wh = intervals[timing];
      const again = row !== undefined && Date.parse(timestamp) === Date.parse(row.last_timestamp);
      if (wh !== undefined && !again && wh >= 0) {
        sum += wh;
        this.put.run(chargerId, ref, timing, sum, timestamp);
      }
      most = Math.max(most, sum);
    }
    return Math.round(startWh + most);
  }
}
