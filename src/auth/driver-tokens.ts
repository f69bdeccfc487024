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

/** How many verified tokens are remembered (a quote or Start then reads no token row). */
const VERIFIED_CACHE_SIZE = 10_000;

/** Short-lived opaque bearer tokens scoped to one driver; only their hashes are stored. */
export class DriverTokens {
  /**
   * Tokens found valid, by hash (never the token), oldest first: Map keeps insertion order, and a
   * hit is moved to the end, so the first key is the least recently used. Expiry is checked on
   * every hit against the stored expiry; a token deleted from the table (`forget`, the daily
   * purge) leaves the cache with it. Unknown tokens are never cached: guessing fills nothing.
   */
  private readonly verified = new Map<string, { driverId: string; expiresAtMs: number }>();
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
    return this.checkHash(sha256Hex(token));
  }

  /** check() for a token already hashed by the caller (who also keys its rate limit on it). */
  checkHash(hash: string): TokenCheck {
    const now = this.clock.now();
    const cached = this.verified.get(hash);
    if (cached) {
      if (now >= cached.expiresAtMs) {
        this.verified.delete(hash);
        return { kind: 'expired' };
      }
      this.verified.delete(hash);
      this.verified.set(hash, cached);
      return { kind: 'valid', driverId: cached.driverId };
    }
    const row = this.findStmt.get(hash);
    if (!row) return { kind: 'unknown' };
    if (now >= row.expires_at_ms) return { kind: 'expired' };
    this.verified.set(hash, { driverId: row.driver_id, expiresAtMs: row.expires_at_ms });
    if (this.verified.size > VERIFIED_CACHE_SIZE) {
      const oldest = this.verified.keys().next().value;
      if (oldest !== undefined) this.verified.delete(oldest);
    }
    return { kind: 'valid', driverId: row.driver_id };
  }

  private purgeDaily(now: number): void {
    const day = 86_400_000;
    if (now - this.lastPurge < 3_600_000) return;
    this.lastPurge = now;
    this.purgeStmt.run(now - day);
    // Purged rows were expired a day ago: a cached copy would say 'expired', the table 'unknown'.
    for (const [hash, v] of this.verified)
      if (v.expiresAtMs < now - day) this.verified.delete(hash);
  }
}
