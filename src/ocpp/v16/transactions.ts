import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/database.js';
import { perDatabase } from '../../store/per-database.js';

export interface Transaction16 {
  id: number;
  chargerId: string;
  connector: number;
  idTag: string;
  meterStart: number;
  accepted: boolean;
  stopped: boolean;
}

interface Row {
  id: number;
  charger_id: string;
  connector: number;
  id_tag: string;
  meter_start: number;
  accepted: number;
  stopped_at: string | null;
}

function toTx(row: Row): Transaction16 {
  return {
    id: row.id,
    chargerId: row.charger_id,
    connector: row.connector,
    idTag: row.id_tag,
    meterStart: row.meter_start,
    accepted: row.accepted === 1,
    stopped: row.stopped_at !== null,
  };
}

/**
 * In OCPP 1.6 the central system hands out transaction ids. This table is where they come from,
 * and it recognises a StartTransaction repeated after a lost reply so that the repeat gets the
 * same id instead of a second transaction: same charger, connector and idTag (in any case, a
 * CiString), and either the same timestamp or the same meterStart while the transaction is open
 * (some chargers stamp each retry anew).
 */
export class Transactions16 {
  /** Shared by every connection: it holds only prepared statements. */
  static readonly of = perDatabase((db) => new Transactions16(db));

  private readonly findStart: Statement<[string, number, string, string, number, string], Row>;
  private readonly insertStmt: Statement<[string, number, string, number, string]>;
  private readonly acceptStmt: Statement<[number, number]>;
  private readonly byIdStmt: Statement<[number, string], Row>;
  private readonly stopStmt: Statement<[number, string, string, number]>;
  private readonly openByTag: Statement<[string, string], Row>;
  private readonly openOnCharger: Statement<[string], Row>;
  private readonly openOnConnector: Statement<[string, number], Row>;

  constructor(db: Db) {
    // The exact repeat first: it is the one meant even if a later transaction matches the register.
    this.findStart = db.prepare(
      `SELECT * FROM ocpp16_transactions WHERE charger_id = ? AND connector = ? AND id_tag = ? COLLATE NOCASE
         AND (started_at = ? OR (meter_start = ? AND stopped_at IS NULL))
       ORDER BY started_at = ? DESC, id DESC LIMIT 1`,
    );
    this.insertStmt = db.prepare(
      `INSERT INTO ocpp16_transactions (charger_id, connector, id_tag, meter_start, started_at, accepted)
       VALUES (?, ?, ?, ?, ?, 0)`,
    );
    this.acceptStmt = db.prepare('UPDATE ocpp16_transactions SET accepted = ? WHERE id = ?');
    this.byIdStmt = db.prepare('SELECT * FROM ocpp16_transactions WHERE id = ? AND charger_id = ?');
    // Not stopped, accepted or not: a charger that lost the StartTransaction reply does not know
    // which of its transactions the gateway refused, so a refused one may be the one it means.
    const open = 'stopped_at IS NULL';
    this.openByTag = db.prepare(
      `SELECT * FROM ocpp16_transactions WHERE charger_id = ? AND id_tag = ? COLLATE NOCASE AND ${open} LIMIT 2`,
    );
    this.openOnCharger = db.prepare(
      `SELECT * FROM ocpp16_transactions WHERE charger_id = ? AND ${open} LIMIT 2`,
    );
    this.openOnConnector = db.prepare(
      `SELECT * FROM ocpp16_transactions WHERE charger_id = ? AND connector = ? AND ${open} LIMIT 2`,
    );
    this.stopStmt = db.prepare(
      `UPDATE ocpp16_transactions SET meter_stop = ?, stopped_at = ?, stop_reason = ?
       WHERE id = ? AND stopped_at IS NULL`,
    );
  }

  findRepeat(
    chargerId: string,
    connector: number,
    idTag: string,
    meterStart: number,
    timestamp: string,
  ): Transaction16 | undefined {
    const row = this.findStart.get(chargerId, connector, idTag, timestamp, meterStart, timestamp);
    return row ? toTx(row) : undefined;
  }

  open(
    chargerId: string,
    connector: number,
    idTag: string,
    meterStart: number,
    timestamp: string,
  ): number {
    return Number(
      this.insertStmt.run(chargerId, connector, idTag, meterStart, timestamp).lastInsertRowid,
    );
  }

  setAccepted(id: number, accepted: boolean): void {
    this.acceptStmt.run(accepted ? 1 : 0, id);
  }

  get(id: number, chargerId: string): Transaction16 | undefined {
    const row = this.byIdStmt.get(id, chargerId);
    return row ? toTx(row) : undefined;
  }

  /**
   * The open transaction a message with a transactionId the gateway never handed out (0, -1: a
   * charger that lost the StartTransaction reply) must mean: the one with the message's idTag,
   * else (no idTag given) the only open one on the connector (MeterValues) or on the whole charger (StopTransaction,
   * which names no connector). Ambiguous means none: nothing is guessed. Transactions the gateway
   * refused (Invalid) and the charger has not stopped count too: the charger may mean one of them,
   * and taking the accepted one instead would settle its session on another connector's meter.
   */
  resolveUnknown(
    chargerId: string,
    hint: { idTag?: string; connector?: number },
  ): Transaction16 | undefined {
    const rows = this.candidates(chargerId, hint);
    const only = rows.length === 1 ? rows[0] : undefined;
    return only?.accepted ? only : undefined;
  }

  /** Up to two open transactions a message without a usable transactionId could mean. */
  candidates(chargerId: string, hint: { idTag?: string; connector?: number }): Transaction16[] {
    const rows =
      hint.idTag !== undefined
        ? this.openByTag.all(chargerId, hint.idTag)
        : hint.connector === undefined
          ? this.openOnCharger.all(chargerId)
          : this.openOnConnector.all(chargerId, hint.connector);
    return rows.map(toTx);
  }

  /** Returns false when the transaction had already been stopped (a repeated StopTransaction). */
  stop(id: number, meterStop: number, timestamp: string, reason: string): boolean {
    return this.stopStmt.run(meterStop, timestamp, reason, id).changes === 1;
  }
}
