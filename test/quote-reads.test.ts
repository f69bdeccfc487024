import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { QuoteReads, type QuoteDriver } from '../src/charging/quote-reads.js';
import { OPEN_STATE } from '../src/charging/session-store.js';
import { toDriver, type DriverRow } from '../src/fleet/roster.js';
import { openDatabase, type Db } from '../src/store/database.js';

/**
 * The quote's memo (src/charging/quote-reads.ts): whatever is written, by whichever statement, in
 * a transaction that commits or rolls back, a quote reads exactly what the tables hold. The oracle
 * reads each table on its own, outside the memo.
 */
let dir: string;
let path: string;
let db: Db;

const DRIVERS = ['d1', 'd2', 'd3'];
const CONNECTORS = [
  ['cp-1', '1'],
  ['cp-1', '2'],
  ['cp-2', '1'],
] as const;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-quote-reads-'));
  path = join(dir, 'gateway.db');
  db = openDatabase(path);
  db.exec(`INSERT INTO fleets (id, name, created_at) VALUES ('f', 'F', 'x')`);
  for (const id of DRIVERS) {
    db.prepare(
      `INSERT INTO drivers (id, fleet_id, email, active, created_at, updated_at)
       VALUES (?, 'f', ?, 1, 'x', 'x')`,
    ).run(id, `${id}@example.com`);
  }
  // d3 has no wallet until a step makes one.
  for (const id of ['d1', 'd2']) {
    db.prepare(`INSERT INTO wallets (driver_id, balance, updated_at) VALUES (?, 0, 'x')`).run(id);
    db.prepare(
      `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, created_at)
       VALUES (?, ?, 'opening', 5000, 5000, 'x')`,
    ).run(`open-${id}`, id);
  }
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What the tables hold, read table by table. */
function oracle(d: Db, driverId: string, chargerId: string, connectorId: string) {
  const row = d.prepare('SELECT * FROM drivers WHERE id = ?').get(driverId) as
    DriverRow | undefined;
  if (!row) return undefined;
  const wallet = d.prepare('SELECT balance FROM wallets WHERE driver_id = ?').get(driverId) as
    { balance: number } | undefined;
  const soc = d
    .prepare('SELECT soc_percent, measured_at FROM driver_telematics WHERE driver_id = ?')
    .get(driverId) as { soc_percent: number; measured_at: string } | undefined;
  const open = d
    .prepare(
      `SELECT id, driver_id FROM sessions WHERE charger_id = ? AND connector_id = ? AND ${OPEN_STATE}`,
    )
    .get(chargerId, connectorId) as { id: string; driver_id: string } | undefined;
  const expected: QuoteDriver = {
    driver: toDriver(row),
    balance: wallet ? wallet.balance : null,
    telematics: soc ? { socPercent: soc.soc_percent, measuredAt: soc.measured_at } : undefined,
    openSession: open ? { id: open.id, driverId: open.driver_id } : null,
  };
  return expected;
}

let seq = 0;
const balance = (driverId: string) =>
  (db.prepare('SELECT balance FROM wallets WHERE driver_id = ?').pluck().get(driverId) as
    number | undefined) ?? null;

/** Each step writes the way some part of the gateway does; a step may find nothing to do. */
type Step =
  | { kind: 'topUp'; driver: string; amount: number }
  | { kind: 'spend'; driver: string; amount: number }
  | { kind: 'driver'; driver: string; active: boolean; vehicle: boolean }
  | { kind: 'soc'; driver: string; percent: number }
  | { kind: 'socGone'; driver: string }
  | { kind: 'wallet'; driver: string }
  | { kind: 'open'; driver: string; connector: number }
  | { kind: 'stopping'; connector: number }
  | { kind: 'settle'; connector: number }
  | { kind: 'meter'; connector: number; wh: number };

function apply(step: Step): void {
  const at = `t${seq++}`;
  const connector = 'connector' in step ? CONNECTORS[step.connector] : undefined;
  const openOn = () =>
    connector &&
    (db
      .prepare(
        `SELECT id FROM sessions WHERE charger_id = ? AND connector_id = ? AND ${OPEN_STATE}`,
      )
      .pluck()
      .get(connector[0], connector[1]) as string | undefined);
  switch (step.kind) {
    case 'topUp':
    case 'spend': {
      const now = balance(step.driver);
      if (now === null) return;
      const amount = step.kind === 'topUp' ? step.amount : -Math.min(step.amount, now);
      if (amount === 0) return;
      // The wallet moves through the ledger's own trigger (an UPDATE made by a trigger).
      db.prepare(
        `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, created_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      ).run(at, step.driver, amount > 0 ? 'top_up' : 'adjustment', amount, now + amount, at);
      return;
    }
    case 'driver':
      db.prepare(
        `UPDATE drivers SET active = ?, vehicle_model = ?, vehicle_battery_wh = ?, updated_at = ?
         WHERE id = ?`,
      ).run(
        step.active ? 1 : 0,
        step.vehicle ? `Model ${at}` : null,
        step.vehicle ? 60_000 : null,
        at,
        step.driver,
      );
      return;
    case 'soc':
      db.prepare(
        `INSERT INTO driver_telematics (driver_id, soc_percent, measured_at, received_at)
         VALUES (?, ?, ?, ?) ON CONFLICT (driver_id) DO UPDATE SET
         soc_percent = excluded.soc_percent, measured_at = excluded.measured_at`,
      ).run(step.driver, step.percent, at, at);
      return;
    case 'socGone':
      db.prepare('DELETE FROM driver_telematics WHERE driver_id = ?').run(step.driver);
      return;
    case 'wallet':
      db.prepare(
        `INSERT INTO wallets (driver_id, balance, updated_at) VALUES (?, 0, ?) ON CONFLICT DO NOTHING`,
      ).run(step.driver, at);
      return;
    case 'open':
      if (!connector || openOn()) return;
      db.prepare(
        `INSERT INTO sessions (id, driver_id, charger_id, connector_id, state, amount,
           price_micro_ngn_per_wh, limit_wh, id_token, created_at)
         VALUES (?, ?, ?, ?, 'authorizing', 500, 400000, 1000, ?, ?)`,
      ).run(`ses-${at}`, step.driver, connector[0], connector[1], `tok-${at}`, at);
      return;
    case 'stopping': {
      const id = openOn();
      if (id) db.prepare(`UPDATE sessions SET state = 'stopping' WHERE id = ?`).run(id);
      return;
    }
    case 'settle': {
      const id = openOn();
      if (!id) return;
      const driver = db.prepare('SELECT driver_id FROM sessions WHERE id = ?').pluck().get(id);
      const now = balance(driver as string);
      if (now === null) return;
      db.prepare(
        `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, session_id, created_at)
         VALUES (?, ?, 'session_credit', 0, ?, ?, ?)`,
      ).run(at, driver, now, id, at);
      db.prepare(
        `UPDATE sessions SET state = 'settled', cost = amount, delivered_wh = 1000, credited = 0,
           ended_at = ? WHERE id = ?`,
      ).run(at, id);
      return;
    }
    case 'meter': {
      // A column no quote reads: fires no trigger, and must not need to.
      const id = openOn();
      if (id) db.prepare('UPDATE sessions SET last_meter_wh = ? WHERE id = ?').run(step.wh, id);
      return;
    }
  }
}

const driverId = fc.constantFrom(...DRIVERS);
const connectorIx = fc.integer({ min: 0, max: CONNECTORS.length - 1 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('topUp' as const),
    driver: driverId,
    amount: fc.integer({ min: 1, max: 900 }),
  }),
  fc.record({
    kind: fc.constant('spend' as const),
    driver: driverId,
    amount: fc.integer({ min: 1, max: 900 }),
  }),
  fc.record({
    kind: fc.constant('driver' as const),
    driver: driverId,
    active: fc.boolean(),
    vehicle: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('soc' as const),
    driver: driverId,
    percent: fc.integer({ min: 0, max: 100 }),
  }),
  fc.record({ kind: fc.constant('socGone' as const), driver: driverId }),
  fc.record({ kind: fc.constant('wallet' as const), driver: driverId }),
  fc.record({ kind: fc.constant('open' as const), driver: driverId, connector: connectorIx }),
  fc.record({ kind: fc.constant('stopping' as const), connector: connectorIx }),
  fc.record({ kind: fc.constant('settle' as const), connector: connectorIx }),
  fc.record({ kind: fc.constant('meter' as const), connector: connectorIx, wh: fc.nat(100_000) }),
);

/** A batch of steps in one transaction that commits, or is rolled back, or no transaction. */
const batch = fc.record({
  steps: fc.array(step, { minLength: 1, maxLength: 4 }),
  how: fc.constantFrom('plain', 'commit', 'rollback', 'savepoint-rollback'),
  /** Quotes read inside the open transaction too: they must not be kept past it. */
  readInside: fc.boolean(),
});

class RolledBack extends Error {}

describe('quote reads: the memo never answers what the tables do not hold', () => {
  it('after any writes, committed or rolled back, every quote reads what the tables hold', () => {
    const reads = new QuoteReads(db, 0);
    const checkAll = () => {
      for (const d of DRIVERS) {
        for (const [c, k] of CONNECTORS) expect(reads.read(d, c, k)).toEqual(oracle(db, d, c, k));
      }
    };
    fc.assert(
      fc.property(fc.array(batch, { minLength: 1, maxLength: 25 }), (batches) => {
        checkAll();
        for (const b of batches) {
          const body = () => {
            for (const s of b.steps) apply(s);
            if (b.readInside) checkAll();
          };
          try {
            if (b.how === 'plain') body();
            else if (b.how === 'commit') db.transaction(body)();
            else if (b.how === 'rollback')
              db.transaction(() => {
                body();
                throw new RolledBack();
              })();
            else
              db.transaction(() => {
                // Group commit's shape: each write in its own savepoint, one rolled back alone.
                apply({ kind: 'topUp', driver: 'd1', amount: 1 });
                try {
                  db.transaction(() => {
                    body();
                    throw new RolledBack();
                  })();
                } catch (err) {
                  if (!(err instanceof RolledBack)) throw err;
                }
              })();
          } catch (err) {
            if (!(err instanceof RolledBack)) throw err;
          }
          checkAll();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('answers a repeated quote without running a statement, and a write is read again', () => {
    const reads = new QuoteReads(db, 60_000);
    const first = reads.read('d1', 'cp-1', '1');
    const statement = Object.getPrototypeOf(db.prepare('SELECT 1')) as { get: () => unknown };
    const get = vi.spyOn(statement, 'get');
    try {
      for (let i = 0; i < 100; i++) expect(reads.read('d1', 'cp-1', '1')).toEqual(first);
      expect(get).not.toHaveBeenCalled();
      apply({ kind: 'topUp', driver: 'd1', amount: 7 });
      get.mockClear();
      expect(reads.read('d1', 'cp-1', '1')?.balance).toBe(5007);
      expect(get).toHaveBeenCalledTimes(1);
    } finally {
      get.mockRestore();
    }
  });

  it("sees another process's writes within 100 ms", async () => {
    const reads = new QuoteReads(db);
    expect(reads.read('d1', 'cp-1', '1')?.balance).toBe(5000);
    const other = new Database(path);
    try {
      other
        .prepare(
          `INSERT INTO ledger_entries (id, driver_id, kind, amount, balance_after, created_at)
           VALUES ('other', 'd1', 'top_up', 100, 5100, 'x')`,
        )
        .run();
    } finally {
      other.close();
    }
    await new Promise((r) => setTimeout(r, 120));
    expect(reads.read('d1', 'cp-1', '1')?.balance).toBe(5100);
  });
});
