import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { migrate } from '../../../src/store/migrations.js';
import { PAGE_SIZE, WAL_CHECKPOINT_PAGES } from '../../../src/store/page-size.js';
import { serveParent } from '../http/children.js';
import { seedReferenceDriver } from '../lib/seed.js';
import { writeBytes } from './io.js';
import type { BareRequest, BareResult } from './messages.js';

/**
 * The reference for the bytes a meter sample costs: the session's energy written as the gateway
 * writes it, on bare better-sqlite3, at the same durability tier and the same pace. A file-backed
 * WAL database with the gateway's pragmas and schema (SQL it reaches for: the same page size,
 * the same row), `sessions` charging sessions, and for each sample the register update of
 * SessionStore (its `segmentStmt`) committed alone at synchronous=NORMAL, as `relaxed` commits it
 * (src/store/durability.ts): on the same schedule as the site's chargers sample, for the same
 * window. What is left out is all the gateway does besides that write.
 */
async function run(req: BareRequest): Promise<BareResult> {
  const db = new Database(req.dbPath);
  db.pragma(`page_size = ${PAGE_SIZE}`);
  db.pragma('journal_mode = WAL');
  db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  const at = new Date().toISOString();
  seedReferenceDriver(db, at);
  const ids = Array.from({ length: req.sessions }, () => randomUUID());
  const insert = db.prepare(
    `INSERT INTO sessions (id, driver_id, charger_id, connector_id, state, amount, price_micro_ngn_per_wh,
       limit_wh, id_token, transaction_ref, meter_start_wh, last_meter_wh, created_at, started_at)
     VALUES (?, 'drv-ref', ?, '1', 'charging', 100000, 412500, 242424, ?, ?, 1000, 1000, ?, ?)`,
  );
  db.transaction(() =>
    ids.forEach((id, i) => insert.run(id, `REF-${i}`, randomUUID(), String(i + 1), at, at)),
  )();
  // SessionStore's register update, as the gateway prepares it (src/charging/session-store.ts).
  const segment = db.prepare(
    `UPDATE sessions SET meter_carried_wh = ?, meter_segment_start_wh = ?, last_meter_wh = ?,
       meter_pending_reset_wh = ?, meter_pending_reset_timestamp = ?, meter_last_at_ms = ?,
       meter_last_stamp_ms = ?, meter_last_epoch = ?, meter_possible_wh = ?, meter_gap_wh = ?, last_activity_at = ?
     WHERE id = ? AND state IN ('charging', 'stopping')`,
  );
  const normal = db.prepare('PRAGMA synchronous = NORMAL');
  const full = db.prepare('PRAGMA synchronous = FULL');
  const registers = ids.map(() => 1_000);
  const sample = (i: number) => {
    registers[i] = (registers[i] as number) + req.traffic.whPerSample;
    const now = Date.now();
    normal.run();
    try {
      db.transaction(() =>
        segment.run(
          0,
          1_000,
          registers[i],
          null,
          null,
          now,
          now,
          0,
          registers[i],
          0,
          new Date(now).toISOString(),
          ids[i],
        ),
      )();
    } finally {
      full.run();
    }
  };

  let samples = 0;
  const timers: NodeJS.Timeout[] = [];
  const before = writeBytes(process.pid);
  ids.forEach((_, i) => {
    const fire = () => {
      sample(i);
      samples += 1;
    };
    const periodMs = req.traffic.sampleSeconds * 1000;
    timers.push(
      setTimeout(
        () => {
          fire();
          timers.push(setInterval(fire, periodMs));
        },
        (i / ids.length) * periodMs,
      ),
    );
  });
  await sleep(req.seconds * 1000);
  for (const timer of timers) clearTimeout(timer);
  const writeBytesDelta = writeBytes(process.pid) - before;
  db.close();
  return { samples, writeBytes: writeBytesDelta };
}

serveParent<BareRequest, BareResult>(run);
