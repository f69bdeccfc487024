import type { Statement } from 'better-sqlite3';
import {
  SESSION_VIEW_COLUMNS,
  toSessionView,
  type SessionView,
  type SessionViewRow,
} from '../../charging/session-view.js';
import type { SessionTariff } from '../../charging/session-store.js';
import type { Db } from '../../store/database.js';
import { maskToken } from '../../id-tokens/token-key.js';
import { EVENTS_OF_TRANSACTION, eventOfRow, type EventRow } from '../../ocpp/v201/event-row.js';
import type { KeptLine, StopAskerRow } from '../stopped-by.js';

/** The session's charger's own limit and cost, where it holds them (OCPP 2.1). */
export interface StationChecks {
  limit: {
    energyWh: number;
    costNgn: number;
    sentEnergyWh: number | null;
    sentCostNgn: number | null;
    confirmedEnergyWh: number | null;
    confirmedCostNgn: number | null;
    confirmedAt: string | null;
    tariffStatus: string | null;
  } | null;
  costDifferences: {
    kind: 'running' | 'final';
    energyWh: number;
    stationNgn: number;
    gatewayNgn: number;
    at: string;
  }[];
}
import { allPages, bind, where, type Page } from './query.js';

export const SESSION_STATES = [
  'authorizing',
  'authorized',
  'charging',
  'stopping',
  'settled',
  'refunded',
] as const;

export interface SessionFilter {
  states?: readonly string[] | undefined;
  chargerId?: string | undefined;
  driverId?: string | undefined;
  fleetId?: string | undefined;
  /** created at or after (ISO) */
  from?: string | undefined;
  /** created before (ISO) */
  to?: string | undefined;
}

export interface SessionRow extends SessionView {
  fleetId: string;
  /** How it started: the app, or a tap of a card or vehicle (docs/driver-tokens.md). */
  origin: 'app' | 'card' | 'vehicle';
  /** The tap's token, masked; null for an app session. */
  token: string | null;
  /** Started by the charger offline and reported late. */
  startedOffline: boolean;
}

/** What the operator's session rows read beside the session view (the tap's columns). */
const TAP_COLUMNS = `s.origin, s.started_offline,
  (SELECT token_key FROM id_tokens t WHERE t.id = s.id_token_id) AS token_key`;

interface TapColumns {
  fleet_id: string;
  origin: SessionRow['origin'];
  started_offline: number;
  token_key: string | null;
}

function toSessionRow(r: SessionViewRow & TapColumns): SessionRow {
  return {
    ...toSessionView(r),
    fleetId: r.fleet_id,
    origin: r.origin,
    token: r.token_key === null ? null : maskToken(r.token_key),
    startedOffline: r.started_offline === 1,
  };
}

function sessionWhere(f: SessionFilter, params: Record<string, unknown>): string[] {
  const parts: string[] = [];
  if (f.states?.length) {
    const names = f.states.map((state, i) => {
      params[`state${i}`] = state;
      return `@state${i}`;
    });
    parts.push(`s.state IN (${names.join(', ')})`);
  }
  bind(params, parts, 's.charger_id = @chargerId', 'chargerId', f.chargerId);
  bind(params, parts, 's.driver_id = @driverId', 'driverId', f.driverId);
  bind(params, parts, 'd.fleet_id = @fleetId', 'fleetId', f.fleetId);
  bind(params, parts, 's.created_at >= @from', 'from', f.from);
  bind(params, parts, 's.created_at < @to', 'to', f.to);
  return parts;
}

/** Sessions as the operator reads them: pages, one session's record, what is open. */
export class SessionReads {
  private stopAskerStmt: Statement<[string], StopAskerRow> | undefined;

  constructor(private readonly db: Db) {}

  page(f: SessionFilter, before: number | undefined, limit: number): Page<SessionRow> {
    const params: Record<string, unknown> = { limit };
    const parts = sessionWhere(f, params);
    bind(params, parts, 's.rowid < @before', 'before', before);
    const rows = this.db
      .prepare(
        `SELECT s.rowid AS rid, d.fleet_id, ${TAP_COLUMNS}, ${SESSION_VIEW_COLUMNS} FROM sessions s
         JOIN drivers d ON d.id = s.driver_id ${where(parts)} ORDER BY s.rowid DESC LIMIT @limit`,
      )
      .all(params) as (SessionViewRow & TapColumns & { rid: number })[];
    const last = rows.at(-1);
    return {
      items: rows.map(toSessionRow),
      nextCursor: rows.length === limit && last ? String(last.rid) : null,
    };
  }

  /** Every matching session, in pages of `chunk`, for exports that must not hold the database. */
  *all(f: SessionFilter, chunk = 500): Generator<SessionRow[]> {
    yield* allPages((before) => this.page(f, before, chunk));
  }

  openOn(
    chargerId: string,
    connectorId: string,
  ): { sessionId: string; driverId: string; state: string } | undefined {
    return this.db
      .prepare(
        `SELECT id AS sessionId, driver_id AS driverId, state FROM sessions
         WHERE charger_id = ? AND connector_id = ?
           AND state IN ('authorizing', 'authorized', 'charging', 'stopping')`,
      )
      .get(chargerId, connectorId) as ReturnType<SessionReads['openOn']>;
  }

  one(
    sessionId: string,
  ): (SessionRow & { transactionRef: string | null; tariff: SessionTariff | null }) | undefined {
    const row = this.db
      .prepare(
        `SELECT d.fleet_id, s.transaction_ref, s.tariff_id, s.tariff_version, s.tariff_window,
           ${TAP_COLUMNS}, ${SESSION_VIEW_COLUMNS} FROM sessions s
         JOIN drivers d ON d.id = s.driver_id WHERE s.id = ?`,
      )
      .get(sessionId) as
      | (SessionViewRow &
          TapColumns & {
            transaction_ref: string | null;
            tariff_id: string | null;
            tariff_version: number | null;
            tariff_window: string | null;
          })
      | undefined;
    if (!row) return undefined;
    return {
      ...toSessionRow(row),
      transactionRef: row.transaction_ref,
      // Sessions started before tariffs were versioned recorded only their price.
      tariff:
        row.tariff_id === null || row.tariff_version === null
          ? null
          : { id: row.tariff_id, version: row.tariff_version, window: row.tariff_window },
    };
  }

  /**
   * The charger's own record of the session's transaction (1.6 or 2.0.1 tables). The 2.0.1 tables
   * hold 2.1 stations' transactions too: their protocol is the one the charger last spoke.
   */
  transaction(sessionId: string): Record<string, unknown> | null {
    const v16 = this.db
      .prepare(
        `SELECT 'ocpp1.6' AS protocol, t.id AS transactionId, t.connector, t.meter_start AS meterStartWh,
           t.started_at AS startedAt, t.accepted, t.meter_stop AS meterStopWh,
           t.stopped_at AS stoppedAt, t.stop_reason AS stopReason
         FROM sessions s JOIN ocpp16_transactions t
           ON t.charger_id = s.charger_id AND t.id_tag = s.id_token WHERE s.id = ?`,
      )
      .get(sessionId) as Record<string, unknown> | undefined;
    if (v16) return { ...v16, accepted: v16.accepted === 1 };
    const v201 = this.db
      .prepare(
        `SELECT t.tx_key AS txKey, t.first_event_id AS firstEventId, t.last_event_id AS lastEventId,
           CASE ci.protocol WHEN 'ocpp2.1' THEN 'ocpp2.1' ELSE 'ocpp2.0.1' END AS protocol,
           t.transaction_id AS transactionId, t.evse_id AS evseId,
           t.meter_start_wh AS meterStartWh, t.verdict, t.first_seen_at AS firstSeenAt,
           t.ended_at AS endedAt, t.meter_stop_wh AS meterStopWh, t.stopped_reason AS stoppedReason
         FROM sessions s JOIN ocpp201_transactions t
           ON t.charger_id = s.charger_id AND t.id_token = s.id_token
         LEFT JOIN charger_info ci ON ci.charger_id = s.charger_id
         WHERE s.id = ?`,
      )
      .get(sessionId) as Record<string, unknown> | undefined;
    if (!v201) return null;
    const { txKey, firstEventId, lastEventId, ...tx } = v201;
    // Kept in a compact row (store/migrations/032), read back as the text they came as.
    const events = this.db
      .prepare(EVENTS_OF_TRANSACTION)
      .all(firstEventId, lastEventId, txKey) as EventRow[];
    return { ...tx, events: events.map(eventOfRow) };
  }

  /** Which line stopped the session, as kept at its settlement (charging/stop-line.ts). */
  keptLine(sessionId: string): KeptLine {
    return (
      (this.db
        .prepare('SELECT stop_line AS line, stop_line_gap_wh AS gapWh FROM sessions WHERE id = ?')
        .get(sessionId) as KeptLine | undefined) ?? { line: null, gapWh: null }
    );
  }

  /**
   * What the session's charger held of its limit and its tariff (OCPP 2.1; null for other
   * chargers), and its own costs that differed from the gateway's (docs/money.md).
   */
  stationChecks(sessionId: string): StationChecks {
    const limit = this.db
      .prepare(
        `SELECT l.energy_wh AS energyWh, l.cost_ngn AS costNgn, l.sent_energy_wh AS sentEnergyWh,
           l.sent_cost_ngn AS sentCostNgn, l.confirmed_energy_wh AS confirmedEnergyWh,
           l.confirmed_cost_ngn AS confirmedCostNgn, l.confirmed_at AS confirmedAt,
           l.tariff_status AS tariffStatus
         FROM sessions s JOIN ocpp21_transaction_limits l
           ON l.charger_id = s.charger_id AND l.transaction_id = s.transaction_ref
         WHERE s.id = ?`,
      )
      .get(sessionId) as StationChecks['limit'] | undefined;
    const costDifferences = this.db
      .prepare(
        `SELECT kind, energy_wh AS energyWh, station_ngn AS stationNgn, gateway_ngn AS gatewayNgn, at
         FROM station_cost_differences WHERE session_id = ? ORDER BY id`,
      )
      .all(sessionId) as StationChecks['costDifferences'];
    return { limit: limit ?? null, costDifferences };
  }

  /** Who asked the gateway to stop the session, if anyone did. */
  stopAsker(sessionId: string): StopAskerRow | undefined {
    this.stopAskerStmt ??= this.db.prepare(
      `SELECT origin, operator_id AS operatorId, operator_name AS operatorName
       FROM session_stop_requests WHERE session_id = ?`,
    );
    return this.stopAskerStmt.get(sessionId);
  }

  /**
   * Energy and money of the sessions settled in [from, to), per charger: a session counts when
   * it is settled (its end time), for the energy it delivered and the cost its driver paid.
   */
  energyByCharger(
    from: string,
    to: string,
  ): { chargerId: string; sessions: number; energyWh: number; revenueNgn: number }[] {
    return this.db
      .prepare(
        `SELECT charger_id AS chargerId, count(*) AS sessions,
           coalesce(sum(delivered_wh), 0) AS energyWh, coalesce(sum(cost), 0) AS revenueNgn
         FROM sessions WHERE state = 'settled' AND ended_at >= ? AND ended_at < ?
         GROUP BY charger_id ORDER BY charger_id`,
      )
      .all(from, to) as ReturnType<SessionReads['energyByCharger']>;
  }

  openCount(): number {
    return (
      this.db
        .prepare(
          "SELECT count(*) AS n FROM sessions WHERE state IN ('authorizing', 'authorized', 'charging', 'stopping')",
        )
        .get() as { n: number }
    ).n;
  }
}
