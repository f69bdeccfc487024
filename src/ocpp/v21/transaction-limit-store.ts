import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/database.js';
import { perDatabase } from '../../store/per-database.js';
import type { SessionTariff, TransactionLimit } from '../port.js';

/** What the gateway holds, sent and heard of one 2.1 transaction's limit (migrations/033). */
export interface HeldLimit {
  evseId: number | null;
  energyWh: number;
  costNgn: number;
  tariff: SessionTariff | null;
  /** The station's answer to ChangeTransactionTariff; null: not sent. */
  tariffStatus: string | null;
  sentEnergyWh: number | null;
  sentCostNgn: number | null;
  confirmedEnergyWh: number | null;
  confirmedCostNgn: number | null;
  confirmedAt: string | null;
}

interface Row {
  evse_id: number | null;
  energy_wh: number;
  cost_ngn: number;
  micro_ngn_per_wh: number | null;
  tariff_id: string | null;
  tariff_status: string | null;
  sent_energy_wh: number | null;
  sent_cost_ngn: number | null;
  confirmed_energy_wh: number | null;
  confirmed_cost_ngn: number | null;
  confirmed_at: string | null;
}

type Key = [string, string];

/** Per 2.1 transaction: the limit the gateway holds for it, what it sent, what the station holds. */
export class TransactionLimitStore {
  /** Shared by every connection: it holds only prepared statements. */
  static readonly of = perDatabase((db) => new TransactionLimitStore(db));

  private readonly getStmt: Statement<Key, Row>;
  private readonly holdStmt: Statement<
    [string, string, number | null, number, number, number | null, string | null]
  >;
  private readonly changeStmt: Statement<[number, number, ...Key]>;
  private readonly sentStmt: Statement<[number, number | null, string, ...Key]>;
  private readonly confirmedStmt: Statement<[number | null, number | null, string, ...Key]>;
  private readonly tariffStmt: Statement<[string, ...Key]>;

  private constructor(db: Db) {
    const where = 'WHERE charger_id = ? AND transaction_id = ?';
    this.getStmt = db.prepare(`SELECT * FROM ocpp21_transaction_limits ${where}`);
    // The first accepting event sets it; a repeated one changes nothing (a later change is `change`).
    this.holdStmt = db.prepare(
      `INSERT INTO ocpp21_transaction_limits
         (charger_id, transaction_id, evse_id, energy_wh, cost_ngn, micro_ngn_per_wh, tariff_id)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    );
    this.changeStmt = db.prepare(
      `UPDATE ocpp21_transaction_limits SET energy_wh = ?, cost_ngn = ? ${where}`,
    );
    this.sentStmt = db.prepare(
      `UPDATE ocpp21_transaction_limits SET sent_energy_wh = ?, sent_cost_ngn = ?, sent_at = ? ${where}`,
    );
    this.confirmedStmt = db.prepare(
      `UPDATE ocpp21_transaction_limits SET confirmed_energy_wh = ?, confirmed_cost_ngn = ?,
         confirmed_at = ? ${where}`,
    );
    this.tariffStmt = db.prepare(`UPDATE ocpp21_transaction_limits SET tariff_status = ? ${where}`);
  }

  get(chargerId: string, transactionId: string): HeldLimit | undefined {
    const r = this.getStmt.get(chargerId, transactionId);
    if (!r) return undefined;
    return {
      evseId: r.evse_id,
      energyWh: r.energy_wh,
      costNgn: r.cost_ngn,
      tariff:
        r.tariff_id !== null && r.micro_ngn_per_wh !== null
          ? { tariffId: r.tariff_id, microNgnPerWh: r.micro_ngn_per_wh }
          : null,
      tariffStatus: r.tariff_status,
      sentEnergyWh: r.sent_energy_wh,
      sentCostNgn: r.sent_cost_ngn,
      confirmedEnergyWh: r.confirmed_energy_wh,
      confirmedCostNgn: r.confirmed_cost_ngn,
      confirmedAt: r.confirmed_at,
    };
  }

  /** True when this made the row (the transaction's first accepted start). */
  hold(
    chargerId: string,
    transactionId: string,
    evseId: number | null,
    limit: TransactionLimit,
    tariff: SessionTariff | undefined,
  ): boolean {
    const made = this.holdStmt.run(
      chargerId,
      transactionId,
      evseId,
      limit.energyWh,
      limit.costNgn,
      tariff?.microNgnPerWh ?? null,
      tariff?.tariffId ?? null,
    );
    return made.changes === 1;
  }

  /** False when the gateway holds no limit for the transaction. */
  change(chargerId: string, transactionId: string, limit: TransactionLimit): boolean {
    return this.changeStmt.run(limit.energyWh, limit.costNgn, chargerId, transactionId).changes > 0;
  }

  sent(
    chargerId: string,
    transactionId: string,
    energyWh: number,
    costNgn: number | null,
    at: string,
  ): void {
    this.sentStmt.run(energyWh, costNgn, at, chargerId, transactionId);
  }

  confirmed(
    chargerId: string,
    transactionId: string,
    energyWh: number | null,
    costNgn: number | null,
    at: string,
  ): void {
    this.confirmedStmt.run(energyWh, costNgn, at, chargerId, transactionId);
  }

  tariffAnswered(chargerId: string, transactionId: string, status: string): void {
    this.tariffStmt.run(status, chargerId, transactionId);
  }
}
