import type { Statement } from 'better-sqlite3';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import type { AlertKind } from './alert.js';
import type { AlertStore } from './alert-store.js';
import type { Observation } from './conditions.js';

/**
 * Kinds that are facts, raised once, not conditions that go away: a session's (from rows the stop
 * assurance wrote) and a station's own payment (raised as it is told).
 */
const LATCHED: ReadonlySet<AlertKind> = new Set([
  'stop_escalated',
  'operator_loss',
  'station_payment',
]);

export interface AlertWatchOptions {
  db: Db;
  store: AlertStore;
  clock: Clock;
  log: Logger;
  checkMs: number;
  /** How long a condition holds before it is raised, by kind. */
  raiseAfterMs: (kind: AlertKind) => number;
  clearAfterMs: number;
  /** The conditions that hold now (chargers, outbox, disk, certificates). */
  observe: () => Observation[];
  stopEscalated: boolean;
  /**
   * Operator loss per session above which `operator_loss` is raised (an offline start's unpaid
   * energy whatever its size); null: not watched.
   */
  operatorLossWh: number | null;
}

interface Escalated {
  sessionId: string;
  chargerId: string;
  connectorId: string;
  steps: string;
  since: string;
}

interface Loss {
  sessionId: string;
  chargerId: string;
  connectorId: string;
  wh: number;
}

/**
 * Raises each condition once and clears it once. No storm from a condition that comes and goes:
 * it is raised only after it has held for its raise delay, and its alert is cleared only after it
 * has been gone for the clear delay (both measured across checks; a restart starts them again,
 * the open alerts themselves are in the database). Stops past the remote stop and operator
 * losses are facts about a session, raised once ever: the first clears when its session is
 * closed, the second when an operator acknowledges it.
 */
export class AlertWatch {
  private timer: NodeJS.Timeout | null = null;
  /** Since when a condition without an open alert has held, by kind/subject. */
  private readonly heldSince = new Map<string, number>();
  /** Since when an open alert's condition has been gone, by alert id. */
  private readonly goneSince = new Map<string, number>();
  private readonly escalatedStmt: Statement<[], Escalated>;
  private readonly closedStmt: Statement<[], { id: string }>;
  private readonly lossStmt: Statement<[number], Loss>;

  constructor(private readonly o: AlertWatchOptions) {
    this.escalatedStmt = o.db.prepare(
      `SELECT a.session_id AS sessionId, s.charger_id AS chargerId, s.connector_id AS connectorId,
         group_concat(DISTINCT a.step) AS steps, min(a.sent_at) AS since
       FROM stop_attempts a JOIN sessions s ON s.id = a.session_id
       WHERE a.step <> 'remote_stop' AND NOT EXISTS
         (SELECT 1 FROM alerts WHERE kind = 'stop_escalated' AND subject = a.session_id)
       GROUP BY a.session_id`,
    );
    this.closedStmt = o.db.prepare(
      `SELECT a.id FROM alerts a JOIN sessions s ON s.id = a.subject
       WHERE a.kind = 'stop_escalated' AND a.cleared_at IS NULL
         AND s.state IN ('settled', 'refunded')`,
    );
    this.lossStmt = o.db.prepare(
      `SELECT l.session_id AS sessionId, s.charger_id AS chargerId, s.connector_id AS connectorId,
         sum(l.wh) AS wh
       FROM operator_losses l JOIN sessions s ON s.id = l.session_id
       WHERE NOT EXISTS
         (SELECT 1 FROM alerts WHERE kind = 'operator_loss' AND subject = l.session_id)
       GROUP BY l.session_id HAVING sum(l.wh) > ? OR max(l.reason = 'offline_unpaid') = 1`,
    );
  }

  start(): void {
    this.timer = setInterval(() => this.check(), this.o.checkMs);
    this.timer.unref();
    this.check();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  check(): void {
    try {
      const now = this.o.clock.now();
      this.conditions(now);
      this.sessionFacts(new Date(now).toISOString());
    } catch (err) {
      this.o.log.error({ err: (err as Error).message }, 'alert check failed');
    }
  }

  private conditions(now: number): void {
    const at = new Date(now).toISOString();
    const open = new Map(
      this.o.store
        .open()
        .filter((a) => !LATCHED.has(a.kind))
        .map((a) => [key(a.kind, a.subject), a]),
    );
    const held = new Set<string>();
    for (const obs of this.o.observe()) {
      const k = key(obs.kind, obs.subject);
      held.add(k);
      const alert = open.get(k);
      if (alert) {
        this.goneSince.delete(alert.id);
        continue;
      }
      const since = this.heldSince.get(k) ?? now;
      this.heldSince.set(k, since);
      if (now - since < this.o.raiseAfterMs(obs.kind)) continue;
      this.heldSince.delete(k);
      this.o.store.raise(obs.kind, obs.subject, { ...obs.detail, since: iso(since) }, at);
      this.o.log.warn({ kind: obs.kind, subject: obs.subject, ...obs.detail }, 'alert raised');
    }
    for (const k of this.heldSince.keys()) if (!held.has(k)) this.heldSince.delete(k);
    for (const [k, alert] of open) {
      if (held.has(k)) continue;
      const since = this.goneSince.get(alert.id) ?? now;
      this.goneSince.set(alert.id, since);
      if (now - since < this.o.clearAfterMs) continue;
      this.goneSince.delete(alert.id);
      if (this.o.store.clear(alert.id, at))
        this.o.log.info({ kind: alert.kind, subject: alert.subject }, 'alert cleared');
    }
  }

  private sessionFacts(at: string): void {
    if (this.o.stopEscalated) {
      for (const e of this.escalatedStmt.all()) {
        const steps = e.steps.split(',');
        this.o.store.raise('stop_escalated', e.sessionId, { ...e, steps }, at);
        this.o.log.warn({ sessionId: e.sessionId, steps }, 'alert raised: stop escalated');
      }
    }
    for (const { id } of this.closedStmt.all()) this.o.store.clear(id, at);
    if (this.o.operatorLossWh !== null) {
      for (const loss of this.lossStmt.all(this.o.operatorLossWh)) {
        const detail = { ...loss, thresholdWh: this.o.operatorLossWh };
        this.o.store.raise('operator_loss', loss.sessionId, detail, at);
        this.o.log.warn(detail, 'alert raised: operator loss');
      }
    }
  }
}

function key(kind: AlertKind, subject: string): string {
  return `${kind}\u0000${subject}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
