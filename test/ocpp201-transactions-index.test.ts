import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LATEST_ON_EVSE } from '../src/ocpp/v201/transactions.js';
import { openDatabase, type Db } from '../src/store/database.js';

let db: Db | undefined;
let dir: string | undefined;
afterEach(() => {
  db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  db = dir = undefined;
});

describe("a 2.0.1 EVSE's newest transaction", () => {
  it('is read through the (charger_id, evse_id) index, not by sorting every transaction of the charger', () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-tx201-'));
    db = openDatabase(join(dir, 'gateway.db'));
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN ${LATEST_ON_EVSE}`)
      .all('CP-1', 1)
      .map((row) => (row as { detail: string }).detail);
    expect(plan.join(' | ')).toMatch(
      /USING INDEX ocpp201_transactions_by_evse \(charger_id=\? AND evse_id=\?\)/,
    );
    expect(plan.join(' | ')).not.toMatch(/TEMP B-TREE/);
  });

  it('is the last one heard of on that EVSE', () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-tx201-'));
    db = openDatabase(join(dir, 'gateway.db'));
    const insert = db.prepare(
      'INSERT INTO ocpp201_transactions (charger_id, transaction_id, evse_id, first_seen_at) VALUES (?, ?, ?, ?)',
    );
    for (const [tx, evse] of [
      ['a', 1],
      ['b', 2],
      ['c', 1],
      ['d', 2],
    ] as const)
      insert.run('CP-1', tx, evse, '2026-11-28T00:00:00.000Z');
    insert.run('CP-2', 'e', 1, '2026-11-28T00:00:00.000Z');
    const latest = db.prepare<[string, number], { transaction_id: string }>(LATEST_ON_EVSE);
    expect(latest.get('CP-1', 1)?.transaction_id).toBe('c');
    expect(latest.get('CP-1', 2)?.transaction_id).toBe('d');
    expect(latest.get('CP-2', 1)?.transaction_id).toBe('e');
  });
});
