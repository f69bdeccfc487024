import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Transactions201 } from '../src/ocpp/v201/transactions.js';
import { openDatabase, type Db } from '../src/store/database.js';

/** The 2.0.1 transaction table on a real SQLite file: which transaction an EVSE holds now. */
let dir: string;
let db: Db;
let txs: Transactions201;
const at = '2026-11-27T10:00:00.000Z';

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-tx201-'));
  db = openDatabase(join(dir, 'gateway.db'));
  txs = Transactions201.of(db);
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function heard(transactionId: string, evseId: number): void {
  txs.open('CS-1', transactionId, at);
  txs.fill('CS-1', transactionId, { evseId, idToken: null, meterStartWh: null });
}

describe('the transaction going on at an EVSE (for a MeterValues that names none)', () => {
  it('is the last one heard of there: an older one never ended does not make it ambiguous', () => {
    heard('tx-1', 1);
    heard('tx-2', 1);
    heard('tx-3', 2);
    expect(txs.openOn('CS-1', 1)?.transactionId).toBe('tx-2');
    expect(txs.openOn('CS-1', 2)?.transactionId).toBe('tx-3');
    expect(txs.openOn('CS-1', 3)).toBeUndefined();
    expect(txs.openOn('CS-2', 1)).toBeUndefined();
  });

  it('is none once the last one ended, even if an older one never did', () => {
    heard('tx-1', 1);
    heard('tx-2', 1);
    txs.end('CS-1', 'tx-2', at, 12_000, 'Local');
    expect(txs.openOn('CS-1', 1)).toBeUndefined();
  });
});
