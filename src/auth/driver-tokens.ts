import type { Statement } from 'better-sqlite3';
import type { Clock } from '../shared/clock.js';
import type { Db } from '../store/database.js';
import { randomSecret, sha256Hex } from './secrets.js';

export const DRIVER_TOKEN_PREFIX = 'fdt_';

export interface MintedToken {
  token: string;
  expiresAt: string;
}

export type TokenCheck =
  { kind: 'valid'; driverId: string } | { kind: 'expired' } | { kind: 'unknown' };

/** Short-lived opaque bearer tokens scoped to one driver; only their hashes are stored. */
export class DriverTokens {
  private readonly insertStmt: Statement<[string, string, number, string]>;
  private readonly findStmt: Statement<[string], { driver_id: string; expires_at_ms: number }>;
  private readonly purgeStmt: Statement<[number]>;
  private lastPurge = 0;

  constructor(
    db: Db,
    private readonly clock: Clock,
    private readonly ttlSeconds: number,
  ) {
    this.insertStmt = db.prepare(
      'INSERT INTO driver_tokens (token_hash, driver_id, expires_at_ms, created_at) VALUES (?, ?, ?, ?)',
    );
    this.findStmt = db.prepare(
      'SELECT driver_id, expires_at_ms FROM driver_tokens WHERE token_hash = ?',
    );
    // expired tokens are kept for a day so that late callers hear token_expired, not invalid_token
    this.purgeStmt = db.prepare('DELETE FROM driver_tokens WHERE expires_at_ms < ?');
  }

  mint(driverId: string): MintedToken {
    const now = this.clock.now();
    this.purgeDaily(now);
    const token = randomSecret(DRIVER_TOKEN_PREFIX);
    const expiresAtMs = now + this.ttlSeconds * 1000;
    this.insertStmt.run(sha256Hex(token), driverId, expiresAtMs, new Date(now).toISOString());
    return { token, expiresAt: new Date(expiresAtMs).toISOString() };
  }

  /**
   * Looked up by the token's SHA-256, so the time the lookup takes depends on the hash, which an
   * attacker cannot steer towards a stored one: no secret-dependent comparison happens here.
   */
  check(token: string): TokenCheck {
    const row = this.findStmt.get(sha256Hex(token));
    if (!row) return { kind: 'unknown' };
    if (this.clock.now() >= row.expires_at_ms) return { kind: 'expired' };
    return { kind: 'valid', driverId: row.driver_id };
  }

  private purgeDaily(now: number): void {
    const day = 86_400_000;
    if (now - this.lastPurge < 3_600_000) return;
    this.lastPurge = now;
    this.purgeStmt.run(now - day);
  }
}
