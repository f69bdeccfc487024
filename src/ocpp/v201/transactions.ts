import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/database.js';
import { perDatabase } from '../../store/per-database.js';
import { eventColumns, keptTime, sameTime, typeCodeOf, type EventColumns } from './event-row.js';
import type { TransactionEventReq } from './messages.js';

export interface Transaction201 {
  /** The gateway's own small key for it, under which its events are kept. */
  key: number;
  chargerId: string;
  transactionId: string;
  evseId: number | null;
  idToken: string | null;
  meterStartWh: number | null;
  /** What we answered for its token; null until a token was known and judged. */
  verdict: 'accepted' | 'invalid' | null;
  ended: boolean;
  meterStopWh: number | null;
  stoppedReason: string | null;
}

interface Row {
  tx_key: number;
  charger_id: string;
  transaction_id: string;
  evse_id: number | null;
  id_token: string | null;
  meter_start_wh: number | null;
  verdict: 'accepted' | 'invalid' | null;
  ended_at: string | null;
  meter_stop_wh: number | null;
  stopped_reason: string | null;
}

function toTx(row: Row): Transaction201 {
  return {
    key: row.tx_key,
    chargerId: row.charger_id,
    transactionId: row.transaction_id,
    evseId: row.evse_id,
    idToken: row.id_token,
    meterStartWh: row.meter_start_wh,
    verdict: row.verdict,
    ended: row.ended_at !== null,
    meterStopWh: row.meter_stop_wh,
    stoppedReason: row.stopped_reason,
  };
}

export type EventSeen = 'new' | 'repeat' | 'reused_seq_no';

/**
 * OCPP 2.0.1 transactions as this gateway heard of them, and every TransactionEvent by its seqNo.
 * The charger names the transaction; whatever order its events arrive in, the first one creates
 * the row and the others fill it in, so no event is lost and none is acted on twice.
 */
/**
 * An EVSE's newest transaction: rows are inserted as transactions are first heard of, so the last
 * one on an EVSE is its newest. Read on every 2.0.1 status and meter sample, through the
 * (charger_id, evse_id) index: test/ocpp201-transactions-index.test.ts holds its query plan.
 */
export const LATEST_ON_EVSE =
  'SELECT * FROM ocpp201_transactions WHERE charger_id = ? AND evse_id = ? ORDER BY rowid DESC LIMIT 1';

export class Transactions201 {
  /** Shared by every connection: it holds only prepared statements. */
  static readonly of = perDatabase((db) => new Transactions201(db));

  private readonly byId: Statement<[string, string], Row>;
  private readonly latestOnEvse: Statement<[string, number], Row>;
  private readonly insertTx: Statement<[string, string, string]>;
  private readonly fillStmt: Statement<
    [number | null, string | null, number | null, string, string]
  >;
  private readonly verdictStmt: Statement<[string, string, string]>;
  private readonly endStmt: Statement<[string, number | null, string, string, string]>;
  private readonly findEvent: Statement<
    [number, number],
    { type_code: number; timestamp_ms: number | null; timestamp_text: string | null }
  >;
  private readonly insertEvent: Statement<[number, number, ...EventColumns]>;
  private readonly remoteStartInsert: Statement<[string, number, string, string]>;
  private readonly remoteStartToken: Statement<[number, string], { id_token: string }>;

  constructor(db: Db) {
    this.byId = db.prepare(
      'SELECT * FROM ocpp201_transactions WHERE charger_id = ? AND transaction_id = ?',
    );
    this.latestOnEvse = db.prepare(LATEST_ON_EVSE);
    this.insertTx = db.prepare(
      `INSERT INTO ocpp201_transactions (charger_id, transaction_id, first_seen_at) VALUES (?, ?, ?)
       ON CONFLICT DO NOTHING`,
    );
    // What a later event adds never overwrites what an earlier one said.
    this.fillStmt = db.prepare(
      `UPDATE ocpp201_transactions SET evse_id = COALESCE(evse_id, ?), id_token = COALESCE(id_token, ?),
         meter_start_wh = COALESCE(meter_start_wh, ?)
       WHERE charger_id = ? AND transaction_id = ?`,
    );
    this.verdictStmt = db.prepare(
      'UPDATE ocpp201_transactions SET verdict = ? WHERE charger_id = ? AND transaction_id = ?',
    );
    this.endStmt = db.prepare(
      `UPDATE ocpp201_transactions SET ended_at = ?, meter_stop_wh = ?, stopped_reason = ?
       WHERE charger_id = ? AND transaction_id = ? AND ended_at IS NULL`,
    );
    this.findEvent = db.prepare(
      `SELECT type_code, timestamp_ms, timestamp_text FROM ocpp201_transaction_events
       WHERE tx_key = ? AND seq_no = ?`,
    );
    // Keyed by the transaction's small key (migrations/031), in a compact row (032, event-row.ts).
    this.insertEvent = db.prepare(
      `INSERT INTO ocpp201_transaction_events (tx_key, seq_no, type_code, trigger_code,
         trigger_text, offline, timestamp_ms, timestamp_text, received_at_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tx_key, seq_no) DO NOTHING`,
    );
    this.remoteStartInsert = db.prepare(
      'INSERT INTO ocpp201_remote_starts (charger_id, evse_id, id_token, created_at) VALUES (?, ?, ?, ?)',
    );
    this.remoteStartToken = db.prepare(
      'SELECT id_token FROM ocpp201_remote_starts WHERE remote_start_id = ? AND charger_id = ?',
    );
  }

  /** Creates the transaction's row if this is the first we hear of it; returns its key. */
  open(chargerId: string, transactionId: string, at: string): number {
    const made = this.insertTx.run(chargerId, transactionId, at);
    if (made.changes === 1) return Number(made.lastInsertRowid);
    return (this.get(chargerId, transactionId) as Transaction201).key;
  }

  get(chargerId: string, transactionId: string): Transaction201 | undefined {
    const row = this.byId.get(chargerId, transactionId);
    return row ? toTx(row) : undefined;
  }

  /**
   * The transaction going on at an EVSE: the last one heard of there, unless it ended. An EVSE
   * holds one transaction at a time, so an older one never ended (a charger that rebooted and
   * forgot it) is over and does not make the EVSE ambiguous.
   */
  openOn(chargerId: string, evseId: number): Transaction201 | undefined {
    const row = this.latestOnEvse.get(chargerId, evseId);
    return row && row.ended_at === null ? toTx(row) : undefined;
  }

  /**
   * Records the event under its seqNo. A repeat (same seqNo, type and instant: a retry after a
   * lost reply, or an offline queue sent twice, its time spelled alike or not) is reported as
   * such and must change nothing. A seqNo reused for a different event is a charger bug: it is
   * recorded and acted on. `known` is the transaction as it stood before this event (undefined:
   * first heard of now), for `fill`.
   */
  see(
    chargerId: string,
    req: TransactionEventReq,
    receivedAt: string,
  ): { seen: EventSeen; known: Transaction201 | undefined } {
    const id = req.transactionInfo.transactionId;
    // Every event is a meter sample at least: the common case (a known transaction, a new seqNo)
    // costs one read and one insert; the earlier event is read only when the seqNo was taken.
    const known = this.get(chargerId, id);
    const key = known?.key ?? this.open(chargerId, id, receivedAt);
    const inserted = this.insertEvent.run(
      key,
      req.seqNo,
      ...eventColumns(
        req.eventType,
        req.triggerReason,
        req.offline === true,
        req.timestamp,
        Date.parse(receivedAt),
      ),
    );
    if (inserted.changes === 1) return { seen: 'new', known };
    const earlier = this.findEvent.get(key, req.seqNo);
    const same =
      earlier !== undefined &&
      earlier.type_code === typeCodeOf(req.eventType) &&
      sameTime({ ms: earlier.timestamp_ms, text: earlier.timestamp_text }, keptTime(req.timestamp));
    return { seen: same ? 'repeat' : 'reused_seq_no', known };
  }

  /** Adds what this event tells of its transaction; `known`: the row read by `see`, if any. */
  fill(
    chargerId: string,
    transactionId: string,
    facts: { evseId: number | null; idToken: string | null; meterStartWh: number | null },
    known: Transaction201 | undefined = this.get(chargerId, transactionId),
  ): Transaction201 {
    // Most events (meter samples) add nothing: no write, no page appended to the WAL for them.
    const adds =
      !known ||
      (known.evseId === null && facts.evseId !== null) ||
      (known.idToken === null && facts.idToken !== null) ||
      (known.meterStartWh === null && facts.meterStartWh !== null);
    if (!adds) return known as Transaction201;
    this.fillStmt.run(facts.evseId, facts.idToken, facts.meterStartWh, chargerId, transactionId);
    return this.get(chargerId, transactionId) as Transaction201;
  }

  setVerdict(chargerId: string, transactionId: string, accepted: boolean): void {
    this.verdictStmt.run(accepted ? 'accepted' : 'invalid', chargerId, transactionId);
  }

  /** Returns false when the transaction had already ended (its Ended was seen before). */
  end(
    chargerId: string,
    transactionId: string,
    at: string,
    meterStopWh: number | null,
    reason: string,
  ): boolean {
    return this.endStmt.run(at, meterStopWh, reason, chargerId, transactionId).changes === 1;
  }

  /** A new remoteStartId for a RequestStartTransaction, remembered with its token. */
  newRemoteStart(chargerId: string, evseId: number, idToken: string, at: string): number {
    return Number(this.remoteStartInsert.run(chargerId, evseId, idToken, at).lastInsertRowid);
  }

  tokenOfRemoteStart(chargerId: string, remoteStartId: number): string | null {
    return this.remoteStartToken.get(remoteStartId, chargerId)?.id_token ?? null;
  }
}
