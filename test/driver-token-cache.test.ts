import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DriverTokens } from '../src/auth/driver-tokens.js';
import { openDatabase, type Db } from '../src/store/database.js';

/**
 * The verified-token cache of DriverTokens: a hit answers without the table, but never longer
 * than the token lives, and a token whose row is gone is not kept valid by the cache.
 */
let dir: string;
let db: Db;
let now = Date.parse('2026-11-24T05:00:00.000Z');
const clock = { now: () => now };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-token-cache-'));
  db = openDatabase(join(dir, 'gateway.db'));
  db.exec(`INSERT INTO fleets (id, name, created_at) VALUES ('f', 'F', 'x');
    INSERT INTO drivers (id, fleet_id, email, active, created_at, updated_at)
      VALUES ('d1', 'f', 'd1@example.com', 1, 'x', 'x')`);
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('verified driver-token cache', () => {
  it('a cached token expires on time', () => {
    const tokens = new DriverTokens(db, clock, 60);
    const { token } = tokens.mint('d1');
    expect(tokens.check(token)).toEqual({ kind: 'valid', driverId: 'd1' });
    expect(tokens.check(token)).toEqual({ kind: 'valid', driverId: 'd1' });
    now += 60_000;
    expect(tokens.check(token)).toEqual({ kind: 'expired' });
  });

  it('answers a hit without the table, and forgets the oldest past its bound', () => {
    const tokens = new DriverTokens(db, clock, 600);
    const first = tokens.mint('d1').token;
    expect(tokens.check(first).kind).toBe('valid');
    // The row deleted behind its back (the gateway deletes a row only a day after it expired):
    // the cached verification still stands …
    db.exec('DELETE FROM driver_tokens');
    expect(tokens.check(first).kind).toBe('valid');
    // … until 10,000 other tokens have been verified since: then the table decides again.
    const minted = db.transaction(() => Array.from({ length: 10_000 }, () => tokens.mint('d1')))();
    for (const m of minted) tokens.check(m.token);
    expect(tokens.check(first)).toEqual({ kind: 'unknown' });
  });

  it('never caches an unknown token', () => {
    const tokens = new DriverTokens(db, clock, 600);
    expect(tokens.check('fdt_not-a-token').kind).toBe('unknown');
    expect(tokens.check('fdt_not-a-token').kind).toBe('unknown');
  });
});
