import type { Db } from '../../store/database.js';

/** An operator's decision that a connector or charger takes no new session. */
export interface OutOfService {
  by: string;
  reason: string | null;
  at: string;
}

/** What the gateway recorded about each charger: its boot, its holds, its odd behaviour. */
export class ChargerReads {
  /** Tables other branches add; read when present (the seam for charger deviations). */
  private readonly hasDeviations: boolean;

  constructor(private readonly db: Db) {
    const has = (name: string) =>
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !==
      undefined;
    this.hasDeviations = has('charger_deviations');
  }

  info(chargerId: string):
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
      .get(chargerId) as ReturnType<ChargerReads['info']>;
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
    // One row per kind of deviation, each counted (src/store/migrations/007-field-edge.ts).
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
}
