import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';

/**
 * Session rows of a bare reference, on a database with the gateway's schema whose driver `drv-ref`
 * was seeded (seedReferenceDriver): a row opened charging as a transaction start leaves it, and each
 * meter sample's register written with SessionStore's register update (its `segmentStmt`,
 * src/charging/session-store.ts), the statement the gateway runs for every sample.
 */
export interface BareSessions {
  /** A charging session on this connector from `registerWh`; returns its id. */
  open(chargerId: string, connectorId: string, transactionRef: string, registerWh: number): string;
  /** The sample's register written to the session's row; throws unless the row took it. */
  sample(id: string, registerWh: number): void;
}

export function bareSessions(db: Database.Database): BareSessions {
  const insert = db.prepare(
    `INSERT INTO sessions (id, driver_id, charger_id, connector_id, state, amount, price_micro_ngn_per_wh,
       limit_wh, id_token, transaction_ref, meter_start_wh, last_meter_wh, created_at, started_at)
     VALUES (?, 'drv-ref', ?, ?, 'charging', 100000, 412500, 242424, ?, ?, ?, ?, ?, ?)`,
  );
  const segment = db.prepare<
    [number, number, number, null, null, number, number, number, number, number, string, string]
  >(
    `UPDATE sessions SET meter_carried_wh = ?, meter_segment_start_wh = ?, last_meter_wh = ?,
       meter_pending_reset_wh = ?, meter_pending_reset_timestamp = ?, meter_last_at_ms = ?,
       meter_last_stamp_ms = ?, meter_last_epoch = ?, meter_possible_wh = ?, meter_gap_wh = ?, last_activity_at = ?
     WHERE id = ? AND state IN ('charging', 'stopping')`,
  );
  const startWh = new Map<string, number>();
  return {
    open(chargerId, connectorId, transactionRef, registerWh) {
      const id = randomUUID();
      const at = new Date().toISOString();
      insert.run(
        id,
        chargerId,
        connectorId,
        randomUUID(),
        transactionRef,
        registerWh,
        registerWh,
        at,
        at,
      );
      startWh.set(id, registerWh);
      return id;
    },
    sample(id, registerWh) {
      const start = startWh.get(id);
      if (start === undefined) throw new Error(`no session ${id}`);
      const now = Date.now();
      const changed = segment.run(
        0,
        start,
        registerWh,
        null,
        null,
        now,
        now,
        0,
        registerWh,
        0,
        new Date(now).toISOString(),
        id,
      ).changes;
      if (changed !== 1) throw new Error(`session ${id} did not take its sample`);
    },
  };
}
