import type { Statement } from 'better-sqlite3';
import { costDown, paidEnergyWh } from '../pricing/money.js';
import type { Db } from '../store/database.js';
import { deliveredWh } from './meter-track.js';
import type { SessionState } from './session-store.js';

/**
 * A session as people read it (the driver's app, the operator): what was paid, the energy so far
 * (or delivered, once settled), what it cost and what went back to the wallet, and when things
 * happened. Read-only; figures for an open session are those the lifecycle has proven so far.
 */
export interface SessionView {
  sessionId: string;
  driverId: string;
  chargerId: string;
  connectorId: string;
  state: SessionState;
  /** Debited at Start, whole NGN. */
  amount: number;
  pricePerKwh: number;
  /** Energy the amount pays for. */
  paidEnergyWh: number;
  /** Delivered once settled; proven so far while open (0 before the transaction started). */
  energyWh: number;
  /** Settled cost; while charging, the cost of the energy so far (never above the amount). */
  cost: number;
  /** Given back to the wallet: the shortfall once settled, everything once refunded, else 0. */
  credited: number;
  endReason: string | null;
  createdAt: string;
  authorizedAt: string | null;
  startedAt: string | null;
  stopRequestedAt: string | null;
  endedAt: string | null;
  /** With site load management, while it draws power: its allowance, or waiting for capacity. */
  power?: SessionPowerView;
}

export interface SessionPowerView {
  allocatedKw: number;
  /** Its minimum does not fit under the site's limit now: it holds its paid session at 0 kW. */
  waiting: boolean;
}

export interface SessionViewRow {
  id: string;
  driver_id: string;
  charger_id: string;
  connector_id: string;
  state: SessionState;
  amount: number;
  price_micro_ngn_per_wh: number;
  limit_wh: number;
  meter_start_wh: number | null;
  last_meter_wh: number | null;
  meter_carried_wh: number;
  meter_segment_start_wh: number | null;
  meter_pending_reset_wh: number | null;
  delivered_wh: number | null;
  cost: number | null;
  credited: number | null;
  end_reason: string | null;
  created_at: string;
  authorized_at: string | null;
  started_at: string | null;
  stop_requested_at: string | null;
  ended_at: string | null;
}

/** The columns toSessionView needs (for queries that select more, or join). */
export const SESSION_VIEW_COLUMNS = `s.id, s.driver_id, s.charger_id, s.connector_id, s.state, s.amount,
  s.price_micro_ngn_per_wh, s.limit_wh, s.meter_start_wh, s.last_meter_wh, s.meter_carried_wh,
  s.meter_segment_start_wh, s.meter_pending_reset_wh, s.delivered_wh, s.cost, s.credited,
  s.end_reason, s.created_at, s.authorized_at, s.started_at, s.stop_requested_at, s.ended_at`;

export function toSessionView(r: SessionViewRow): SessionView {
  const price = r.price_micro_ngn_per_wh;
  const energyWh =
    r.delivered_wh ??
    (r.meter_start_wh === null
      ? 0
      : deliveredWh({
          segmentStartWh: r.meter_segment_start_wh ?? r.meter_start_wh,
          carriedWh: r.meter_carried_wh,
          lastWh: r.last_meter_wh ?? r.meter_start_wh,
          pendingResetWh: r.meter_pending_reset_wh,
          // Energy so far needs no time: the plausibility bound already held back what it refused.
          lastAtMs: null,
          lastStampMs: null,
          lastEpoch: null,
        }));
  return {
    sessionId: r.id,
    driverId: r.driver_id,
    chargerId: r.charger_id,
    connectorId: r.connector_id,
    state: r.state,
    amount: r.amount,
    pricePerKwh: price / 1000,
    paidEnergyWh: paidEnergyWh(r.amount, price),
    energyWh,
    cost: r.cost ?? (r.state === 'refunded' ? 0 : Math.min(r.amount, costDown(energyWh, price))),
    credited: r.credited ?? (r.state === 'refunded' ? r.amount : 0),
    endReason: r.end_reason,
    createdAt: r.created_at,
    authorizedAt: r.authorized_at,
    startedAt: r.started_at,
    stopRequestedAt: r.stop_requested_at,
    endedAt: r.ended_at,
  };
}

export class SessionViews {
  private readonly byIdStmt: Statement<[string], SessionViewRow>;

  constructor(db: Db) {
    this.byIdStmt = db.prepare(`SELECT ${SESSION_VIEW_COLUMNS} FROM sessions s WHERE s.id = ?`);
  }

  get(sessionId: string): SessionView | undefined {
    const row = this.byIdStmt.get(sessionId);
    return row ? toSessionView(row) : undefined;
  }
}

/** JSON schema of a SessionView (the driver's GET /v1/sessions/{id} and the operator API). */
export const sessionViewSchema = {
  type: 'object',
  properties: {
    sessionId: { type: 'string' },
    driverId: { type: 'string' },
    chargerId: { type: 'string' },
    connectorId: { type: 'string' },
    state: {
      type: 'string',
      enum: ['authorizing', 'authorized', 'charging', 'stopping', 'settled', 'refunded'],
    },
    amount: { type: 'integer' },
    pricePerKwh: { type: 'number' },
    paidEnergyWh: { type: 'integer' },
    energyWh: { type: 'integer' },
    cost: { type: 'integer' },
    credited: { type: 'integer' },
    endReason: { type: ['string', 'null'] },
    createdAt: { type: 'string' },
    authorizedAt: { type: ['string', 'null'] },
    startedAt: { type: ['string', 'null'] },
    stopRequestedAt: { type: ['string', 'null'] },
    endedAt: { type: ['string', 'null'] },
    /** With site load management, while the session draws power (docs/load-management.md). */
    power: {
      type: 'object',
      properties: { allocatedKw: { type: 'number' }, waiting: { type: 'boolean' } },
      required: ['allocatedKw', 'waiting'],
      additionalProperties: false,
    },
  },
  required: [
    'sessionId',
    'driverId',
    'chargerId',
    'connectorId',
    'state',
    'amount',
    'pricePerKwh',
    'paidEnergyWh',
    'energyWh',
    'cost',
    'credited',
    'endReason',
    'createdAt',
    'authorizedAt',
    'startedAt',
    'stopRequestedAt',
    'endedAt',
  ],
  additionalProperties: false,
} as const;
