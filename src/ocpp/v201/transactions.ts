import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/database.js';
import { perDatabase } from '../../store/per-database.js';
import {
  eventColumns,
  keptTime,
  sameTime,
  typeCodeOf,
  TX_EVENT_SPAN,
  type EventColumns,
} from './event-row.js';
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
  /**
   * Where its events lie in arrival order (migrations/034): ids from `first` to `last` (null: up
   * to the table's end); `above`, a seqNo no lower than any of its events that arrived before an
   * event with a lower one (null: none did).
   */
  events: { first: number; last: number | null; above: number | null };
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
  first_event_id: number;
  last_event_id: number | null;
  seq_no_above: number | null;
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
    events: { first: row.first_event_id, last: row.last_event_id, above: row.seq_no_above },
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

/**
 * Transactions whose highest seqNo is remembered: more than a site has going at once, so an entry
 * is only dropped for one long quiet (and read again from the events if it speaks again).
 */
const REMEMBERED_TRANSACTIONS = 4096;

/** The highest seqNo of a transaction with no event stored. */
const NONE = Number.NEGATIVE_INFINITY;

export class Transactions201 {
  /**
   * Shared by every connection: the prepared statements and what the replay check remembers,
   * which must be one per database (`highest`).
   */
  static readonly of = perDatabase((db) => new Transactions201(db));

  /**
   * Per transaction key, a seqNo at least as high as any of its events stored: an event above it
   * is new without a read. Never lower than what is stored, since every insert raises it; it may
   * be higher when a batch rolled back, which only sends an event to the read.
   */
  private readonly highest = new Map<number, number>();

  private readonly byId: Statement<[string, string], Row>;
  private readonly latestOnEvse: Statement<[string, number], Row>;
  private readonly insertTx: Statement<[string, string, string]>;
  private readonly fillStmt: Statement<
    [number | null, string | null, number | null, string, string]
  >;
  private readonly verdictStmt: Statement<[string, string, string]>;
  private readonly endStmt: Statement<[string, number | null, string, string, string]>;
  private readonly findEvent: Statement<
    [number, number | null, number, number],
    { type_code: number; timestamp_ms: number | null; timestamp_text: string | null }
  >;
  private readonly lastArrived: Statement<[number, number | null, number], { seq_no: number }>;
  private readonly insertEvent: Statement<[number, number, ...EventColumns]>;
  private readonly stretchSpan: Statement<[number, number, number]>;
  private readonly raiseAbove: Statement<[number, number, number]>;
  private readonly remoteStartInsert: Statement<[string, number, string, string]>;
  private readonly remoteStartToken: Statement<[number, string], { id_token: string }>;

  constructor(db: Db) {
    this.byId = db.prepare(
      'SELECT * FROM ocpp201_transactions WHERE charger_id = ? AND transaction_id = ?',
    );
    this.latestOnEvse = db.prepare(LATEST_ON_EVSE);
    this.insertTx = db.prepare(
      `INSERT INTO ocpp201_transactions (charger_id, transaction_id, first_seen_at, first_event_id)
       VALUES (?, ?, ?, (SELECT coalesce(max(event_id), 0) + 1 FROM ocpp201_transaction_events))
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
       WHERE ${TX_EVENT_SPAN} AND seq_no = ? LIMIT 1`,
    );
    // Backwards from the span's end: a transaction still sending is found within its last turn.
    this.lastArrived = db.prepare(
      `SELECT seq_no FROM ocpp201_transaction_events WHERE ${TX_EVENT_SPAN}
       ORDER BY event_id DESC LIMIT 1`,
    );
    // In arrival order (migrations/034), in a compact row (032, event-row.ts), under the
    // transaction's small key (031).
    this.insertEvent = db.prepare(
      `INSERT INTO ocpp201_transaction_events (tx_key, seq_no, type_code, trigger_code,
         trigger_text, offline, timestamp_ms, timestamp_text, received_at_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.stretchSpan = db.prepare(
      `UPDATE ocpp201_transactions SET last_event_id = ?
       WHERE tx_key = ? AND (last_event_id IS NULL OR last_event_id < ?)`,
    );
    this.raiseAbove = db.prepare(
      `UPDATE ocpp201_transactions SET seq_no_above = max(coalesce(seq_no_above, ?), ?)
       WHERE tx_key = ?`,
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
   * acted on, its first event kept. `known` is the transaction as it stood before this event
   * (undefined: first heard of now), for `fill`.
   *
   * Events are kept in arrival order with no index by seqNo (migrations/034): an event above the
   * transaction's highest seqNo (`highest`) is new without a read, which is every event of a
   * charger that numbers them in order. Only a seqNo at or below it (a repeat, an event out of
   * order) reads the events heard while the transaction ran. After a restart the highest is the
   * larger of the last-arrived event's seqNo and `seq_no_above`, which an event stored below the
   * highest raises to it: so the one write beyond the event's row is for an event out of order.
   */
  see(
    chargerId: string,
    req: TransactionEventReq,
    receivedAt: string,
  ): { seen: EventSeen; known: Transaction201 | undefined } {
    const id = req.transactionInfo.transactionId;
    // Every event is a meter sample at least: the common case (a known transaction, a new seqNo)
    // costs one read (the transaction) and one insert appended at the table's end.
    const known = this.get(chargerId, id);
    const key = known?.key ?? this.open(chargerId, id, receivedAt);
    const span = known?.events ?? { first: 0, last: null, above: null };
    const top = known ? this.highestOf(key, span) : NONE;
    if (req.seqNo <= top) {
      const earlier = this.findEvent.get(span.first, span.last, key, req.seqNo);
      if (earlier !== undefined) {
        const same =
          earlier.type_code === typeCodeOf(req.eventType) &&
          sameTime(
            { ms: earlier.timestamp_ms, text: earlier.timestamp_text },
            keptTime(req.timestamp),
          );
        return { seen: same ? 'repeat' : 'reused_seq_no', known };
      }
    }
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
    this.remember(key, Math.max(top, req.seqNo));
    if (req.seqNo <= top) this.raiseAbove.run(top, top, key);
    // An Ended event closes the transaction's span; an event after it (late, out of order)
    // moves the close over itself, so the span always holds every event stored.
    if (req.eventType === 'Ended' || span.last !== null) {
      const eventId = Number(inserted.lastInsertRowid);
      this.stretchSpan.run(eventId, key, eventId);
    }
    return { seen: 'new', known };
  }

  /**
   * If the highest stored were above both, the event holding it arrived before a lower one, the
   * last-arrived or one before it, and storing that one raised `above` to at least the highest.
   */
  private highestOf(key: number, span: Transaction201['events']): number {
    const remembered = this.highest.get(key);
    if (remembered !== undefined) return remembered;
    const last = this.lastArrived.get(span.first, span.last, key)?.seq_no ?? NONE;
    const highest = Math.max(last, span.above ?? NONE);
    this.remember(key, highest);
    return highest;
  }

  private remember(key: number, seqNo: number): void {
    this.highest.delete(key);
    this.highest.set(key, seqNo);
    if (this.highest.size > REMEMBERED_TRANSACTIONS) {
      const oldest = this.highest.keys().next().value as number;
      this.highest.delete(oldest);
    }
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
