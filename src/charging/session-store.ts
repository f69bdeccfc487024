import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import type { MeterTrack } from './meter-track.js';
import type { MeterState } from './meter-model.js';
import { idTokenKey } from './id-tokens.js';
import type { StopAsker, StopLine } from './stop-line.js';

/**
 * Session states, all in one place:
 * - authorizing: debited, remote start sent, no answer yet;
 * - authorized:  the charger accepted the remote start; waiting for the EV to start charging;
 * - charging:    the charger reported the transaction started;
 * - stopping:    we asked the charger to stop (paid energy reached, or an operator); waiting for
 *                its stop message;
 * - settled:     the charger reported the end; cost taken, shortfall credited (terminal);
 * - refunded:    never charged (refused, unanswered, EV never started, gateway restarted before the
 *                charger answered); the whole debit went back (terminal).
 */
/** Every state a session can be in, open ones first (the schema's CHECK lists the same). */
export const SESSION_STATES = [
  'authorizing',
  'authorized',
  'charging',
  'stopping',
  'settled',
  'refunded',
] as const;
export type SessionState = (typeof SESSION_STATES)[number];

/**
 * The open states as SQL, spelled exactly as the partial indexes on sessions are (migrations/001-v1.ts):
 * SQLite uses a partial index only for a WHERE that matches its own.
 */
export const OPEN_STATE = "state IN ('authorizing', 'authorized', 'charging', 'stopping')";

interface AskerRow {
  origin: string;
  operatorId: string | null;
  operatorName: string | null;
}

export interface Session {
  id: string;
  driverId: string;
  chargerId: string;
  connectorId: string;
  state: SessionState;
  amount: number;
  microNgnPerWh: number;
  limitWh: number;
  idToken: string;
  transactionRef: string | null;
  meterStartWh: number | null;
  lastMeterWh: number | null;
  /** Energy of register segments before a reset (see meter-track.ts). */
  meterCarriedWh: number;
  /** Register where the current segment began; null = meterStartWh. */
  meterSegmentStartWh: number | null;
  /** Where the register stood before its last drop (see meter-track.ts). */
  meterPendingResetWh: number | null;
  /** The charger's timestamp of that held reading: the same reading again confirms nothing. */
  meterPendingResetTimestamp: string | null;
  /** When the live sample taken as the start register arrived; null: the charger reported it. */
  meterStartSampledAt: string | null;
  /** When the last counted register was received (gateway clock, ms; meter-track.ts). */
  meterLastAtMs: number | null;
  /** Its stamp on the charger's clock and that clock's epoch (meter-track.ts); null: unknown. */
  meterLastStampMs: number | null;
  meterLastEpoch: number | null;
  /**
   * The most energy the session may have delivered, doubted readings included (what the stop is
   * planned on; docs/money.md); null: nothing beyond the proven energy.
   */
  meterPossibleWh: number | null;
  /** Energy no reading can prove (the gap around a register reset), counted toward the stop. */
  meterGapWh: number;
  /** The start register as written when it had a decimal fraction (a kWh meterStart); else null. */
  meterStartUnrounded: number | null;
  /** When the gateway last heard of the session's transaction. */
  lastActivityAt: string | null;
  createdAt: string;
  authorizedAt: string | null;
  /** When the charger reported its transaction started (gateway clock). */
  startedAt: string | null;
  /** Why a session ended (refund reason or the charger's stop reason); null while open. */
  endReason: string | null;
  /** The energy a settled session was billed on; null until settled. */
  deliveredWh: number | null;
  /** How it started: the app's Start, or a tap of a bound card or vehicle (taps.ts). */
  origin: SessionOrigin;
  /** The bound token a tap session started with; null for an app session. */
  idTokenId: string | null;
  /** Started by the charger offline and reported late (docs/money.md "Offline starts"). */
  startedOffline: boolean;
  /** The tariff the price came from, as `id@version[/window]`; null: not recorded. */
  tariffRef: string | null;
  /** Which line stopped it (stop-line.ts), set at settlement; null before. */
  stopLine: StopLine | null;
}

export type SessionOrigin = 'app' | 'card' | 'vehicle';

/**
 * What a meter sample reads of its session (lifecycle.ts): the register's columns and the few it
 * is judged and planned with. Read with one narrow statement per sample instead of the whole row
 * (the busiest read of a charging site).
 */
export type MeteredSession = Pick<
  Session,
  | 'id'
  | 'chargerId'
  | 'connectorId'
  | 'state'
  | 'limitWh'
  | 'meterStartWh'
  | 'lastMeterWh'
  | 'meterCarriedWh'
  | 'meterSegmentStartWh'
  | 'meterPendingResetWh'
  | 'meterPendingResetTimestamp'
  | 'meterStartSampledAt'
  | 'meterLastAtMs'
  | 'meterLastStampMs'
  | 'meterLastEpoch'
  | 'meterPossibleWh'
  | 'meterGapWh'
  | 'meterStartUnrounded'
  | 'startedAt'
>;

interface Row {
  id: string;
  driver_id: string;
  charger_id: string;
  connector_id: string;
  state: SessionState;
  amount: number;
  price_micro_ngn_per_wh: number;
  limit_wh: number;
  id_token: string;
  transaction_ref: string | null;
  meter_start_wh: number | null;
  last_meter_wh: number | null;
  meter_carried_wh: number;
  meter_segment_start_wh: number | null;
  meter_pending_reset_wh: number | null;
  meter_pending_reset_timestamp: string | null;
  meter_start_sampled_at: string | null;
  meter_last_at_ms: number | null;
  meter_last_stamp_ms: number | null;
  meter_last_epoch: number | null;
  meter_possible_wh: number | null;
  meter_gap_wh: number;
  meter_start_unrounded: number | null;
  last_activity_at: string | null;
  created_at: string;
  authorized_at: string | null;
  started_at: string | null;
  end_reason: string | null;
  delivered_wh: number | null;
  origin: SessionOrigin;
  id_token_id: string | null;
  started_offline: number;
  tariff_id: string | null;
  tariff_version: number | null;
  tariff_window: string | null;
  stop_line: StopLine | null;
}

function toSession(row: Row): Session {
  return {
    id: row.id,
    driverId: row.driver_id,
    chargerId: row.charger_id,
    connectorId: row.connector_id,
    state: row.state,
    amount: row.amount,
    microNgnPerWh: row.price_micro_ngn_per_wh,
    limitWh: row.limit_wh,
    idToken: row.id_token,
    transactionRef: row.transaction_ref,
    meterStartWh: row.meter_start_wh,
    lastMeterWh: row.last_meter_wh,
    meterCarriedWh: row.meter_carried_wh,
    meterSegmentStartWh: row.meter_segment_start_wh,
    meterPendingResetWh: row.meter_pending_reset_wh,
    meterPendingResetTimestamp: row.meter_pending_reset_timestamp,
    meterStartSampledAt: row.meter_start_sampled_at,
    meterLastAtMs: row.meter_last_at_ms,
    meterLastStampMs: row.meter_last_stamp_ms,
    meterLastEpoch: row.meter_last_epoch,
    meterPossibleWh: row.meter_possible_wh,
    meterGapWh: row.meter_gap_wh,
    meterStartUnrounded: row.meter_start_unrounded,
    lastActivityAt: row.last_activity_at,
    createdAt: row.created_at,
    authorizedAt: row.authorized_at,
    startedAt: row.started_at,
    endReason: row.end_reason,
    deliveredWh: row.delivered_wh,
    origin: row.origin,
    idTokenId: row.id_token_id,
    startedOffline: row.started_offline === 1,
    tariffRef:
      row.tariff_id === null
        ? null
        : `${row.tariff_id}@${row.tariff_version ?? 0}${row.tariff_window ? `/${row.tariff_window}` : ''}`,
    stopLine: row.stop_line,
  };
}

export interface NewSession {
  id: string;
  driverId: string;
  chargerId: string;
  connectorId: string;
  amount: number;
  microNgnPerWh: number;
  limitWh: number;
  idToken: string;
  createdAt: string;
  /** Where the price came from (kept with the session: the price is fixed at its Start). */
  tariff?: SessionTariff | undefined;
  /** A tap's session: its bound token, and whether the charger started it offline. */
  tap?: { origin: 'card' | 'vehicle'; idTokenId: string; offline: boolean } | undefined;
}

export interface SessionTariff {
  id: string;
  version: number;
  /** The time-of-day window that set the price; null: the tariff's base price. */
  window: string | null;
}

type InsertRow = Omit<NewSession, 'tariff' | 'tap'> & {
  tariffId: string | null;
  tariffVersion: number | null;
  tariffWindow: string | null;
  origin: SessionOrigin;
  idTokenId: string | null;
  startedOffline: number;
};

export interface SettledFigures {
  deliveredWh: number;
  cost: number;
  credited: number;
  reason: string;
  at: string;
  /** Which line stopped it (stop-line.ts); `gapWh` for the station's limit, else null. */
  stopLine: StopLine;
  stopLineGapWh: number | null;
}

/** Session rows. State changes are guarded by the expected current state, so a late or repeated event cannot move a session backwards. */
/** A reading's stamp on the charger's clock and that clock's epoch (charger-clocks.ts). */
export interface ChargerStamp {
  stampMs: number;
  epoch: number | null;
}

export class SessionStore {
  private readonly insertStmt: Statement<InsertRow>;
  private readonly byId: Statement<[string], Row>;
  private readonly byToken: Statement<[string], Row>;
  private readonly openOfIdTokenStmt: Statement<[string], Row>;
  private readonly byTransaction: Statement<[string, string], Row>;
  private readonly meteredByTransaction: Statement<[string, string], MeteredSession>;
  private readonly openOnConnector: Statement<[string, string], Row>;
  private readonly openStmt: Statement<[], Row>;
  private readonly openOnChargerStmt: Statement<[string], Row>;
  private readonly authorizeStmt: Statement<[string, string]>;
  private readonly startStmt: Statement<
    [
      string,
      number | null,
      number | null,
      number | null,
      number | null,
      number | null,
      string,
      string,
    ]
  >;
  private readonly unroundedStmt: Statement<[number, string]>;
  private readonly meterStartStmt: Statement<
    [number, number, string, number, number | null, number | null, number, string]
  >;
  private readonly segmentStmt: Statement<
    [
      number,
      number,
      number,
      number | null,
      string | null,
      number | null,
      number | null,
      number | null,
      number | null,
      number,
      string,
      string,
    ]
  >;
  private readonly possibleStmt: Statement<[number, string, string]>;
  private readonly activityStmt: Statement<[string, string]>;
  private readonly stoppingStmt: Statement<[string, string]>;
  private readonly askerStmt: Statement<[string, string, string | null, string | null]>;
  private readonly settleStmt: Statement<
    [number, number, number, string, string, StopLine, number | null, string]
  >;
  private readonly refundStmt: Statement<[string, string, string]>;
  private readonly askedStmt: Statement<[string], AskerRow>;

  constructor(db: Db) {
    this.insertStmt = db.prepare(
      `INSERT INTO sessions (id, driver_id, charger_id, connector_id, state, amount, price_micro_ngn_per_wh,
         limit_wh, id_token, created_at, tariff_id, tariff_version, tariff_window, origin,
         id_token_id, started_offline)
       VALUES (@id, @driverId, @chargerId, @connectorId, 'authorizing', @amount, @microNgnPerWh,
         @limitWh, @idToken, @createdAt, @tariffId, @tariffVersion, @tariffWindow, @origin,
         @idTokenId, @startedOffline)`,
    );
    this.byId = db.prepare('SELECT * FROM sessions WHERE id = ?');
    this.byToken = db.prepare('SELECT * FROM sessions WHERE id_token = ?');
    this.openOfIdTokenStmt = db.prepare(
      `SELECT * FROM sessions WHERE id_token_id = ? AND id_token_id IS NOT NULL AND ${OPEN_STATE}`,
    );
    this.byTransaction = db.prepare(
      'SELECT * FROM sessions WHERE charger_id = ? AND transaction_ref = ?',
    );
    // Columns named as MeteredSession's fields: the row is the object, nothing is copied.
    this.meteredByTransaction = db.prepare(
      `SELECT id, charger_id AS chargerId, connector_id AS connectorId, state, limit_wh AS limitWh,
         meter_start_wh AS meterStartWh, last_meter_wh AS lastMeterWh,
         meter_carried_wh AS meterCarriedWh, meter_segment_start_wh AS meterSegmentStartWh,
         meter_pending_reset_wh AS meterPendingResetWh,
         meter_pending_reset_timestamp AS meterPendingResetTimestamp,
         meter_start_sampled_at AS meterStartSampledAt, meter_last_at_ms AS meterLastAtMs,
         meter_last_stamp_ms AS meterLastStampMs, meter_last_epoch AS meterLastEpoch,
         meter_possible_wh AS meterPossibleWh, meter_gap_wh AS meterGapWh, started_at AS startedAt,
         meter_start_unrounded AS meterStartUnrounded
       FROM sessions WHERE charger_id = ? AND transaction_ref = ?`,
    );
    this.openOnConnector = db.prepare(
      `SELECT * FROM sessions WHERE charger_id = ? AND connector_id = ? AND ${OPEN_STATE}`,
    );
    this.openStmt = db.prepare(`SELECT * FROM sessions WHERE ${OPEN_STATE} ORDER BY created_at`);
    // No ORDER BY: SQLite would sort in a temporary b-tree, 10× the cost of the indexed search.
    this.openOnChargerStmt = db.prepare(
      `SELECT * FROM sessions WHERE charger_id = ? AND ${OPEN_STATE}`,
    );
    this.authorizeStmt = db.prepare(
      "UPDATE sessions SET state = 'authorized', authorized_at = ? WHERE id = ? AND state = 'authorizing'",
    );
    this.startStmt = db.prepare(
      `UPDATE sessions SET state = 'charging', transaction_ref = ?, meter_start_wh = ?,
         last_meter_wh = ?, meter_last_at_ms = ?, meter_last_stamp_ms = ?, meter_last_epoch = ?,
         started_at = ?
       WHERE id = ? AND state IN ('authorizing', 'authorized')`,
    );
    this.segmentStmt = db.prepare(
      `UPDATE sessions SET meter_carried_wh = ?, meter_segment_start_wh = ?, last_meter_wh = ?,
         meter_pending_reset_wh = ?, meter_pending_reset_timestamp = ?, meter_last_at_ms = ?,
         meter_last_stamp_ms = ?, meter_last_epoch = ?, meter_possible_wh = ?, meter_gap_wh = ?, last_activity_at = ?
       WHERE id = ? AND state IN ('charging', 'stopping')`,
    );
    this.unroundedStmt = db.prepare('UPDATE sessions SET meter_start_unrounded = ? WHERE id = ?');
    this.possibleStmt = db.prepare(
      `UPDATE sessions SET meter_possible_wh = ?, last_activity_at = ?
       WHERE id = ? AND state IN ('charging', 'stopping')`,
    );
    this.activityStmt = db.prepare(
      `UPDATE sessions SET last_activity_at = ? WHERE id = ? AND state IN ('charging', 'stopping')`,
    );
    this.meterStartStmt = db.prepare(
      `UPDATE sessions SET meter_start_wh = ?, last_meter_wh = ?, meter_start_sampled_at = ?,
         meter_last_at_ms = ?, meter_last_stamp_ms = ?, meter_last_epoch = ?, meter_gap_wh = ?
       WHERE id = ? AND meter_start_wh IS NULL AND state IN ('charging', 'stopping')`,
    );
    this.stoppingStmt = db.prepare(
      "UPDATE sessions SET state = 'stopping', stop_requested_at = ? WHERE id = ? AND state = 'charging'",
    );
    this.askerStmt = db.prepare(
      'INSERT INTO session_stop_requests (session_id, origin, operator_id, operator_name) VALUES (?, ?, ?, ?)',
    );
    this.settleStmt = db.prepare(
      `UPDATE sessions SET state = 'settled', delivered_wh = ?, cost = ?, credited = ?, end_reason = ?,
         ended_at = ?, stop_line = ?, stop_line_gap_wh = ? WHERE id = ? AND state IN ('charging', 'stopping')`,
    );
    this.askedStmt = db.prepare(
      `SELECT origin, operator_id AS operatorId, operator_name AS operatorName
       FROM session_stop_requests WHERE session_id = ?`,
    );
    this.refundStmt = db.prepare(
      `UPDATE sessions SET state = 'refunded', end_reason = ?, ended_at = ?
       WHERE id = ? AND state IN ('authorizing', 'authorized')`,
    );
  }

  /** Who asked the gateway to stop the session, if anyone did. */
  stopAsker(sessionId: string): StopAsker | undefined {
    const row = this.askedStmt.get(sessionId);
    if (!row) return undefined;
    return row.origin === 'operator'
      ? {
          origin: 'operator',
          operatorId: row.operatorId ?? '',
          operatorName: row.operatorName ?? '',
        }
      : { origin: 'paid_energy' };
  }

  insert({ tariff, tap, ...session }: NewSession): void {
    this.insertStmt.run({
      ...session,
      // Kept in the form it is looked up in, so that no token can be stored where byIdToken cannot
      // find it (a minted token is already in that form).
      idToken: idTokenKey(session.idToken),
      tariffId: tariff?.id ?? null,
      tariffVersion: tariff?.version ?? null,
      tariffWindow: tariff?.window ?? null,
      origin: tap?.origin ?? 'app',
      idTokenId: tap?.idTokenId ?? null,
      startedOffline: tap?.offline ? 1 : 0,
    });
  }

  get(id: string): Session | undefined {
    const row = this.byId.get(id);
    return row ? toSession(row) : undefined;
  }

  byIdToken(idToken: string): Session | undefined {
    const row = this.byToken.get(idTokenKey(idToken));
    return row ? toSession(row) : undefined;
  }

  /** The open session a bound token started, if any (at most one: a unique index). */
  openOfIdToken(idTokenId: string): Session | undefined {
    const row = this.openOfIdTokenStmt.get(idTokenId);
    return row ? toSession(row) : undefined;
  }

  byTransactionRef(chargerId: string, transactionRef: string): Session | undefined {
    const row = this.byTransaction.get(chargerId, transactionRef);
    return row ? toSession(row) : undefined;
  }

  /** The session a meter sample of the transaction reads (MeteredSession). */
  meteredByTransactionRef(chargerId: string, transactionRef: string): MeteredSession | undefined {
    return this.meteredByTransaction.get(chargerId, transactionRef);
  }

  openOn(chargerId: string, connectorId: string): Session | undefined {
    const row = this.openOnConnector.get(chargerId, connectorId);
    return row ? toSession(row) : undefined;
  }

  allOpen(): Session[] {
    return this.openStmt.all().map(toSession);
  }

  /** A charger's open sessions: what its (re)connection and boot look at, thousands at once in a storm. */
  openOnCharger(chargerId: string): Session[] {
    const rows = this.openOnChargerStmt.all(chargerId);
    if (rows.length > 1) rows.sort((a, b) => a.created_at.localeCompare(b.created_at));
    return rows.map(toSession);
  }

  markAuthorized(id: string, at: string): boolean {
    return this.authorizeStmt.run(at, id).changes === 1;
  }

  /**
   * `meterAtMs`: when the start register was measured (gateway clock, ms); `stamp`: when on the
   * charger's clock, and that clock's epoch.
   */
  markCharging(
    id: string,
    transactionRef: string,
    meterStartWh: number | null,
    at: string,
    meterAtMs: number | null = null,
    stamp: ChargerStamp | null = null,
  ): boolean {
    const known = meterStartWh !== null;
    return (
      this.startStmt.run(
        transactionRef,
        meterStartWh,
        meterStartWh,
        known ? meterAtMs : null,
        known ? (stamp?.stampMs ?? null) : null,
        known ? (stamp?.epoch ?? null) : null,
        at,
        id,
      ).changes === 1
    );
  }

  /**
   * For a charger that did not report its start register: the first live sample is the start.
   * `at` is when it arrived: queued samples cannot be placed after it (lifecycle.ts). `gapWh`: what
   * the session may have delivered before it (the power the charger said), never proven.
   */
  setMeterStart(
    id: string,
    meterWh: number,
    at: string,
    meterAtMs: number,
    stamp: ChargerStamp | null = null,
    gapWh = 0,
  ): boolean {
    return (
      this.meterStartStmt.run(
        meterWh,
        meterWh,
        at,
        meterAtMs,
        stamp?.stampMs ?? null,
        stamp?.epoch ?? null,
        gapWh,
        id,
      ).changes === 1
    );
  }

  /**
   * Where the register stands: its segment, highest value and any drop held (meter-track.ts),
   * with the charger's timestamp of the held reading (null exactly when none is held), and when
   * the session was heard of (`touch` in the same row update: one write per meter sample).
   */
  setSegment(
    id: string,
    track: MeterTrack,
    heldTimestamp: string | null,
    heardAt: string,
    possible: { possibleWh: number; gapWh: number },
  ): void {
    this.segmentStmt.run(
      track.carriedWh,
      track.segmentStartWh,
      track.lastWh,
      track.pendingResetWh,
      track.pendingResetWh === null ? null : heldTimestamp,
      track.lastAtMs,
      track.lastStampMs,
      track.lastEpoch,
      possible.possibleWh,
      possible.gapWh,
      heardAt,
      id,
    );
  }

  /** The start register as the charger wrote it, when it had a decimal fraction (port.ts). */
  setMeterStartUnrounded(id: string, unrounded: number): void {
    this.unroundedStmt.run(unrounded, id);
  }

  /** A doubted reading raised what the session may have delivered (the register is unchanged). */
  setPossible(id: string, possibleWh: number, heardAt: string): void {
    this.possibleStmt.run(possibleWh, heardAt, id);
  }

  touch(id: string, at: string): void {
    this.activityStmt.run(at, id);
  }

  /** Charging to stopping, with who asked; the caller holds the transaction. */
  markStopping(id: string, at: string, by: StopAsker): boolean {
    if (this.stoppingStmt.run(at, id).changes !== 1) return false;
    const operator = by.origin === 'operator' ? by : null;
    this.askerStmt.run(id, by.origin, operator?.operatorId ?? null, operator?.operatorName ?? null);
    return true;
  }

  markSettled(id: string, figures: SettledFigures): boolean {
    return (
      this.settleStmt.run(
        figures.deliveredWh,
        figures.cost,
        figures.credited,
        figures.reason,
        figures.at,
        figures.stopLine,
        figures.stopLineGapWh,
        id,
      ).changes === 1
    );
  }

  markRefunded(id: string, reason: string, at: string): boolean {
    return this.refundStmt.run(reason, at, id).changes === 1;
  }
}

/** The session's register track as the lifecycle keeps it in the row (see meter-track.ts). */
export function trackOf(s: MeteredSession): MeterTrack {
  const startWh = s.meterStartWh ?? 0;
  return {
    segmentStartWh: s.meterSegmentStartWh ?? startWh,
    carriedWh: s.meterCarriedWh,
    lastWh: s.lastMeterWh ?? startWh,
    pendingResetWh: s.meterPendingResetWh,
    lastAtMs: s.meterLastAtMs,
    lastStampMs: s.meterLastStampMs,
    lastEpoch: s.meterLastEpoch,
  };
}

/** The session's meter as the model reads it (meter-model.ts). */
export function meterStateOf(s: MeteredSession): MeterState {
  return {
    startWh: s.meterStartWh,
    startUnrounded: s.meterStartUnrounded,
    startSampled: s.meterStartSampledAt !== null,
    track: trackOf(s),
    heldTimestamp: s.meterPendingResetTimestamp,
    possibleWh: s.meterPossibleWh,
    gapWh: s.meterGapWh,
  };
}
