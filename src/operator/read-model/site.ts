import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/database.js';
import {
  SESSION_VIEW_COLUMNS,
  toSessionView,
  type SessionView,
  type SessionViewRow,
} from '../../charging/session-view.js';
import type { SessionTariff } from '../../charging/session-store.js';
import { costDown } from '../../pricing/money.js';
import type { StopAskerRow } from '../stopped-by.js';

/** An operator's decision that a connector or charger takes no new session. */
export interface OutOfService {
  by: string;
  reason: string | null;
  at: string;
}

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

export interface LedgerFilter {
  driverId?: string | undefined;
  fleetId?: string | undefined;
  kind?: string | undefined;
  sessionId?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export interface SessionRow extends SessionView {
  fleetId: string;
}

export interface LedgerRow {
  seq: number;
  id: string;
  driverId: string;
  fleetId: string;
  kind: string;
  amount: number;
  balanceAfter: number;
  sessionId: string | null;
  reference: string | null;
  createdAt: string;
  actor: string | null;
  reason: string | null;
}

export interface Page<T> {
  items: T[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/** Energy given away in a session: beyond what was paid for, valued at the session's price. */
export interface SessionLoss {
  sessionId: string;
  chargerId: string;
  state: string;
  paidEnergyWh: number;
  energyWh: number;
  /** Delivered beyond the energy the amount paid for (the stop came late). */
  beyondPaidWh: number;
  /** What that energy would have cost: the operator's loss. */
  beyondPaidNgn: number;
  /**
   * What the stop assurance recorded as the operator's loss (operator_losses), Wh by reason:
   * beyond the paid energy, proven by a stop that came after a settlement without one, and what
   * the session may have delivered beyond what its readings proved (docs/money.md).
   */
  recorded: { beyondPaidWh: number; afterSettlementWh: number; unprovenWh: number } | null;
}

/** Adds `sql` (which names @name) when the value is given. */
function bind(
  params: Record<string, unknown>,
  parts: string[],
  sql: string,
  name: string,
  value: unknown,
): void {
  if (value === undefined) return;
  params[name] = value;
  parts.push(sql);
}

function where(parts: string[]): string {
  return parts.length ? `WHERE ${parts.join(' AND ')}` : '';
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

function ledgerWhere(f: LedgerFilter, params: Record<string, unknown>): string[] {
  const parts: string[] = [];
  bind(params, parts, 'l.driver_id = @driverId', 'driverId', f.driverId);
  bind(params, parts, 'd.fleet_id = @fleetId', 'fleetId', f.fleetId);
  bind(params, parts, 'l.kind = @kind', 'kind', f.kind);
  bind(params, parts, 'l.session_id = @sessionId', 'sessionId', f.sessionId);
  bind(params, parts, 'l.created_at >= @from', 'from', f.from);
  bind(params, parts, 'l.created_at < @to', 'to', f.to);
  return parts;
}

type LedgerDbRow = {
  seq: number;
  id: string;
  driver_id: string;
  fleet_id: string;
  kind: string;
  amount: number;
  balance_after: number;
  session_id: string | null;
  reference: string | null;
  created_at: string;
  actor: string | null;
  reason: string | null;
};

function toLedgerRow(r: LedgerDbRow): LedgerRow {
  return {
    seq: r.seq,
    id: r.id,
    driverId: r.driver_id,
    fleetId: r.fleet_id,
    kind: r.kind,
    amount: r.amount,
    balanceAfter: r.balance_after,
    sessionId: r.session_id,
    reference: r.reference,
    createdAt: r.created_at,
    actor: r.actor,
    reason: r.reason,
  };
}

/**
 * The operator's reads of the site, straight from SQLite (read-only). Pages run newest first on
 * an immutable key (a session's rowid, a ledger entry's seq), so a page boundary never moves as
 * new rows arrive.
 */
export class SiteReadModel {
  /** Tables other branches add; read when present (the seam for charger deviations and losses). */
  private readonly hasDeviations: boolean;
  private recordedLossStmt: Statement | undefined;
  private stopAskerStmt: Statement<[string], StopAskerRow> | undefined;

  constructor(private readonly db: Db) {
    const has = (name: string) =>
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !==
      undefined;
    this.hasDeviations = has('charger_deviations');
  }

  sessions(f: SessionFilter, before: number | undefined, limit: number): Page<SessionRow> {
    const params: Record<string, unknown> = { limit };
    const parts = sessionWhere(f, params);
    bind(params, parts, 's.rowid < @before', 'before', before);
    const rows = this.db
      .prepare(
        `SELECT s.rowid AS rid, d.fleet_id, ${SESSION_VIEW_COLUMNS} FROM sessions s
         JOIN drivers d ON d.id = s.driver_id ${where(parts)} ORDER BY s.rowid DESC LIMIT @limit`,
      )
      .all(params) as (SessionViewRow & { rid: number; fleet_id: string })[];
    const last = rows.at(-1);
    return {
      items: rows.map((r) => ({ ...toSessionView(r), fleetId: r.fleet_id })),
      nextCursor: rows.length === limit && last ? String(last.rid) : null,
    };
  }

  /** Every matching session, in pages of `chunk`, for exports that must not hold the database. */
  *allSessions(f: SessionFilter, chunk = 500): Generator<SessionRow[]> {
    let before: number | undefined;
    for (;;) {
      const page = this.sessions(f, before, chunk);
      if (page.items.length) yield page.items;
      if (page.nextCursor === null) return;
      before = Number(page.nextCursor);
    }
  }

  ledger(f: LedgerFilter, before: number | undefined, limit: number): Page<LedgerRow> {
    const params: Record<string, unknown> = { limit };
    const parts = ledgerWhere(f, params);
    bind(params, parts, 'l.seq < @before', 'before', before);
    const rows = this.db
      .prepare(
        `SELECT l.seq, l.id, l.driver_id, d.fleet_id, l.kind, l.amount, l.balance_after,
           l.session_id, l.reference, l.created_at, n.actor, n.reason
         FROM ledger_entries l JOIN drivers d ON d.id = l.driver_id
         LEFT JOIN ledger_notes n ON n.entry_id = l.id
         ${where(parts)} ORDER BY l.seq DESC LIMIT @limit`,
      )
      .all(params) as LedgerDbRow[];
    const last = rows.at(-1);
    return {
      items: rows.map(toLedgerRow),
      nextCursor: rows.length === limit && last ? String(last.seq) : null,
    };
  }

  *allLedger(f: LedgerFilter, chunk = 500): Generator<LedgerRow[]> {
    let before: number | undefined;
    for (;;) {
      const page = this.ledger(f, before, chunk);
      if (page.items.length) yield page.items;
      if (page.nextCursor === null) return;
      before = Number(page.nextCursor);
    }
  }

  fleets(): {
    fleetId: string;
    name: string;
    createdAt: string;
    drivers: number;
    activeDrivers: number;
    walletTotal: number;
  }[] {
    return this.db
      .prepare(
        `SELECT f.id AS fleetId, f.name, f.created_at AS createdAt,
           count(d.id) AS drivers, coalesce(sum(d.active), 0) AS activeDrivers,
           coalesce(sum(w.balance), 0) AS walletTotal
         FROM fleets f LEFT JOIN drivers d ON d.fleet_id = f.id
         LEFT JOIN wallets w ON w.driver_id = d.id
         GROUP BY f.id ORDER BY f.id`,
      )
      .all() as ReturnType<SiteReadModel['fleets']>;
  }

  drivers(fleetId: string | undefined): {
    driverId: string;
    fleetId: string;
    email: string;
    active: boolean;
    vehicleModel: string | null;
    vehicleBatteryWh: number | null;
    balance: number;
    openSessionId: string | null;
  }[] {
    const rows = this.db
      .prepare(
        `SELECT d.id AS driverId, d.fleet_id AS fleetId, d.email, d.active,
           d.vehicle_model AS vehicleModel, d.vehicle_battery_wh AS vehicleBatteryWh,
           coalesce(w.balance, 0) AS balance,
           (SELECT s.id FROM sessions s WHERE s.driver_id = d.id
              AND s.state IN ('authorizing', 'authorized', 'charging', 'stopping')
              ORDER BY s.created_at DESC LIMIT 1) AS openSessionId
         FROM drivers d LEFT JOIN wallets w ON w.driver_id = d.id
         ${fleetId === undefined ? '' : 'WHERE d.fleet_id = @fleetId'}
         ORDER BY d.fleet_id, d.id`,
      )
      .all(fleetId === undefined ? {} : { fleetId }) as (Omit<
      ReturnType<SiteReadModel['drivers']>[number],
      'active'
    > & { active: number })[];
    return rows.map((r) => ({ ...r, active: r.active === 1 }));
  }

  chargerInfo(chargerId: string):
    | {
        protocol: string;
        vendor: string | null;
        model: string | null;
        serialNumber: string | null;
        firmwareVersion: string | null;
        bootedAt: string | null;
        lastSeenAt: string;
      }
    | undefined {
    return this.db
      .prepare(
        `SELECT protocol, vendor, model, serial_number AS serialNumber,
           firmware_version AS firmwareVersion, booted_at AS bootedAt, last_seen_at AS lastSeenAt
         FROM charger_info WHERE charger_id = ?`,
      )
      .get(chargerId) as ReturnType<SiteReadModel['chargerInfo']>;
  }

  /**
   * What the operators took out of service on a charger, by connector id (`*`: the whole
   * charger): who, why and when, from the intents the gateway re-applies at every boot.
   */
  outOfService(chargerId: string): Map<string, OutOfService> {
    const rows = this.db
      .prepare(
        `SELECT connector_id AS connectorId, set_by AS by, reason, set_at AS at
         FROM operator_availability WHERE charger_id = ? AND operative = 0`,
      )
      .all(chargerId) as (OutOfService & { connectorId: string })[];
    return new Map(rows.map(({ connectorId, ...hold }) => [connectorId, hold]));
  }

  /**
   * Field deviations counted for a charger: from charger_deviations when that table exists,
   * otherwise the odd things the OCPP adapters noted in ocpp_events.
   */
  deviations(chargerId: string): {
    source: string;
    count: number;
    kinds?: { kind: string; count: number; firstSeen: string; lastSeen: string }[];
  } {
    if (!this.hasDeviations) {
      const row = this.db
        .prepare('SELECT count(*) AS n FROM ocpp_events WHERE charger_id = ?')
        .get(chargerId) as { n: number };
      return { source: 'ocpp_events', count: row.n };
    }
    // One row per kind of deviation, each counted (src/store/schema-field-edge.ts).
    const kinds = this.db
      .prepare(
        `SELECT kind, count, first_seen AS firstSeen, last_seen AS lastSeen
         FROM charger_deviations WHERE charger_id = ? ORDER BY kind`,
      )
      .all(chargerId) as { kind: string; count: number; firstSeen: string; lastSeen: string }[];
    return {
      source: 'charger_deviations',
      count: kinds.reduce((n, k) => n + k.count, 0),
      kinds,
    };
  }

  recentEvents(
    chargerId: string,
    limit: number,
  ): { seq: number; action: string; note: string; at: string }[] {
    return this.db
      .prepare(
        'SELECT seq, action, note, at FROM ocpp_events WHERE charger_id = ? ORDER BY seq DESC LIMIT ?',
      )
      .all(chargerId, limit) as { seq: number; action: string; note: string; at: string }[];
  }

  openSessionOn(
    chargerId: string,
    connectorId: string,
  ): { sessionId: string; driverId: string; state: string } | undefined {
    return this.db
      .prepare(
        `SELECT id AS sessionId, driver_id AS driverId, state FROM sessions
         WHERE charger_id = ? AND connector_id = ?
           AND state IN ('authorizing', 'authorized', 'charging', 'stopping')`,
      )
      .get(chargerId, connectorId) as ReturnType<SiteReadModel['openSessionOn']>;
  }

  session(
    sessionId: string,
  ): (SessionRow & { transactionRef: string | null; tariff: SessionTariff | null }) | undefined {
    const row = this.db
      .prepare(
        `SELECT d.fleet_id, s.transaction_ref, s.tariff_id, s.tariff_version, s.tariff_window,
           ${SESSION_VIEW_COLUMNS} FROM sessions s
         JOIN drivers d ON d.id = s.driver_id WHERE s.id = ?`,
      )
      .get(sessionId) as
      | (SessionViewRow & {
          fleet_id: string;
          transaction_ref: string | null;
          tariff_id: string | null;
          tariff_version: number | null;
          tariff_window: string | null;
        })
      | undefined;
    if (!row) return undefined;
    return {
      ...toSessionView(row),
      fleetId: row.fleet_id,
      transactionRef: row.transaction_ref,
      // Sessions started before tariffs were versioned recorded only their price.
      tariff:
        row.tariff_id === null || row.tariff_version === null
          ? null
          : { id: row.tariff_id, version: row.tariff_version, window: row.tariff_window },
    };
  }

  /** The charger's own record of the session's transaction (1.6 or 2.0.1 tables). */
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
        `SELECT 'ocpp2.0.1' AS protocol, t.transaction_id AS transactionId, t.evse_id AS evseId,
           t.meter_start_wh AS meterStartWh, t.verdict, t.first_seen_at AS firstSeenAt,
           t.ended_at AS endedAt, t.meter_stop_wh AS meterStopWh, t.stopped_reason AS stoppedReason
         FROM sessions s JOIN ocpp201_transactions t
           ON t.charger_id = s.charger_id AND t.id_token = s.id_token WHERE s.id = ?`,
      )
      .get(sessionId) as Record<string, unknown> | undefined;
    if (!v201) return null;
    const events = this.db
      .prepare(
        `SELECT seq_no AS seqNo, event_type AS eventType, trigger_reason AS triggerReason,
           offline, timestamp, received_at AS receivedAt
         FROM ocpp201_transaction_events e JOIN sessions s ON s.charger_id = e.charger_id
         WHERE s.id = ? AND e.transaction_id = ? ORDER BY seq_no`,
      )
      .all(sessionId, v201.transactionId) as Record<string, unknown>[];
    return { ...v201, events: events.map((e) => ({ ...e, offline: e.offline === 1 })) };
  }

  /** The uplink messages about a session (its ledger entries and state events). */
  outboxFor(
    sessionId: string,
  ): { seq: number; topic: string; type: string; createdAt: string; sentAt: string | null }[] {
    return this.db
      .prepare(
        `SELECT seq, topic, json_extract(payload, '$.type') AS type, created_at AS createdAt,
           sent_at AS sentAt FROM outbox
         WHERE json_extract(payload, '$.sessionId') = @id
            OR json_extract(payload, '$.entry.sessionId') = @id
            OR json_extract(payload, '$.session.id') = @id
         ORDER BY seq`,
      )
      .all({ id: sessionId }) as ReturnType<SiteReadModel['outboxFor']>;
  }

  outbox(
    pendingOnly: boolean,
    before: number | undefined,
    limit: number,
  ): Page<{
    seq: number;
    id: string;
    topic: string;
    type: string;
    createdAt: string;
    sentAt: string | null;
  }> {
    const parts: string[] = [];
    const params: Record<string, unknown> = { limit };
    if (pendingOnly) parts.push('sent_at IS NULL');
    bind(params, parts, 'seq < @before', 'before', before);
    const rows = this.db
      .prepare(
        `SELECT seq, id, topic, json_extract(payload, '$.type') AS type, created_at AS createdAt,
           sent_at AS sentAt FROM outbox ${where(parts)} ORDER BY seq DESC LIMIT @limit`,
      )
      .all(params) as {
      seq: number;
      id: string;
      topic: string;
      type: string;
      createdAt: string;
      sentAt: string | null;
    }[];
    const last = rows.at(-1);
    return { items: rows, nextCursor: rows.length === limit && last ? String(last.seq) : null };
  }

  outboxByTopic(): { topic: string; pending: number; sent: number }[] {
    return this.db
      .prepare(
        `SELECT topic, sum(sent_at IS NULL) AS pending, sum(sent_at IS NOT NULL) AS sent
         FROM outbox GROUP BY topic ORDER BY topic`,
      )
      .all() as { topic: string; pending: number; sent: number }[];
  }

  /**
   * The operator's losses, per settled session: energy delivered beyond what was paid (from the
   * session's registers), with what the stop assurance recorded for it in operator_losses (also
   * energy a late stop proved after the session was settled without one).
   */
  losses(f: SessionFilter): {
    sessions: SessionLoss[];
    beyondPaidWh: number;
    beyondPaidNgn: number;
  } {
    const sessions: SessionLoss[] = [];
    let wh = 0;
    let ngn = 0;
    for (const page of this.allSessions({ ...f, states: ['settled'] })) {
      for (const s of page) {
        const loss = this.sessionLoss(s);
        if (!loss) continue;
        wh += loss.beyondPaidWh;
        ngn += loss.beyondPaidNgn;
        sessions.push(loss);
      }
    }
    return { sessions, beyondPaidWh: wh, beyondPaidNgn: ngn };
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
   * A settled session's loss to the operator (energy beyond what was paid, and what the stop
   * assurance recorded), or null when it has none or is not settled.
   */
  sessionLoss(s: SessionView): SessionLoss | null {
    if (s.state !== 'settled') return null;
    this.recordedLossStmt ??= this.db.prepare(
      `SELECT coalesce(sum(wh) FILTER (WHERE reason = 'beyond_paid'), 0) AS beyondPaidWh,
              coalesce(sum(wh) FILTER (WHERE reason = 'after_settlement'), 0) AS afterSettlementWh,
              coalesce(sum(wh) FILTER (WHERE reason = 'unproven'), 0) AS unprovenWh,
              count(*) AS n
       FROM operator_losses WHERE session_id = ?`,
    );
    const r = this.recordedLossStmt.get(s.sessionId) as {
      beyondPaidWh: number;
      afterSettlementWh: number;
      unprovenWh: number;
      n: number;
    };
    const paid = s.paidEnergyWh;
    const beyondPaidWh = Math.max(0, s.energyWh - paid);
    const recorded =
      r.n > 0
        ? {
            beyondPaidWh: r.beyondPaidWh,
            afterSettlementWh: r.afterSettlementWh,
            unprovenWh: r.unprovenWh,
          }
        : null;
    if (beyondPaidWh === 0 && !recorded) return null;
    return {
      sessionId: s.sessionId,
      chargerId: s.chargerId,
      state: s.state,
      paidEnergyWh: paid,
      energyWh: s.energyWh,
      beyondPaidWh,
      beyondPaidNgn: costDown(beyondPaidWh, Math.round(s.pricePerKwh * 1000)),
      recorded,
    };
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
      .all(from, to) as ReturnType<SiteReadModel['energyByCharger']>;
  }

  openSessionCount(): number {
    return (
      this.db
        .prepare(
          "SELECT count(*) AS n FROM sessions WHERE state IN ('authorizing', 'authorized', 'charging', 'stopping')",
        )
        .get() as { n: number }
    ).n;
  }
}
