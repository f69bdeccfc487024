import type { Statement } from 'better-sqlite3';
import { systemClock, type Clock } from '../shared/clock.js';
import type { Db } from '../store/database.js';
import { randomSecret, sameHash, sha256Hex } from './secrets.js';

export const API_KEY_PREFIX = 'fgk_';

/** How a key is named to people: the first characters of its hash (never the key). */
export const KEY_ID_LENGTH = 12;

/** A key's id: what people and logs call it. */
export function keyIdOf(apiKey: string): string {
  return sha256Hex(apiKey).slice(0, KEY_ID_LENGTH);
}

export interface ApiKeyInfo {
  /** First KEY_ID_LENGTH hex characters of the key's SHA-256. */
  keyId: string;
  keyHash: string;
  label: string;
  createdAt: string;
  /** When it stops (or stopped) being accepted; null while it has no end. */
  revokeAt: string | null;
}

/** Fleet API keys, stored only as hashes. */
export class ApiKeys {
  private readonly findStmt: Statement<[string, number], { key_hash: string; fleet_id: string }>;
  private readonly insertStmt: Statement<[string, string, string, string]>;
  private readonly ownerStmt: Statement<[string], { fleet_id: string }>;
  private readonly revokeStmt: Statement<[string, number, string]>;
  private readonly listStmt: Statement<
    [string],
    { key_hash: string; label: string; created_at: string; revoke_at_ms: number | null }
  >;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
  ) {
    this.findStmt = db.prepare(
      `SELECT key_hash, fleet_id FROM api_keys k WHERE key_hash = ? AND NOT EXISTS (
         SELECT 1 FROM api_key_revocations r WHERE r.key_hash = k.key_hash AND r.revoke_at_ms <= ?)`,
    );
    this.insertStmt = db.prepare(
      'INSERT INTO api_keys (key_hash, fleet_id, label, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    );
    this.ownerStmt = db.prepare('SELECT fleet_id FROM api_keys WHERE key_hash = ?');
    // The earliest revocation wins: a later rotation cannot give a revoked key more time.
    this.revokeStmt = db.prepare(
      `INSERT INTO api_key_revocations (key_hash, revoke_at_ms, created_at) VALUES (?, ?, ?)
       ON CONFLICT (key_hash) DO UPDATE SET revoke_at_ms = excluded.revoke_at_ms
       WHERE excluded.revoke_at_ms < revoke_at_ms`,
    );
    this.listStmt = db.prepare(
      `SELECT k.key_hash, k.label, k.created_at, r.revoke_at_ms FROM api_keys k
       LEFT JOIN api_key_revocations r ON r.key_hash = k.key_hash
       WHERE k.fleet_id = ? ORDER BY k.created_at, k.key_hash`,
    );
  }

  /** A fleet's keys, revoked ones included, by key id. */
  list(fleetId: string): ApiKeyInfo[] {
    return this.listStmt.all(fleetId).map((row) => ({
      keyId: row.key_hash.slice(0, KEY_ID_LENGTH),
      keyHash: row.key_hash,
      label: row.label,
      createdAt: row.created_at,
      revokeAt: row.revoke_at_ms === null ? null : new Date(row.revoke_at_ms).toISOString(),
    }));
  }

  /**
   * The fleet's key named by a key id (a hash prefix of at least 8 characters, as `api-key list`
   * and the operator API show it); undefined unless exactly one key matches.
   */
  byId(fleetId: string, keyId: string): ApiKeyInfo | undefined {
    if (!/^[0-9a-fA-F]{8,64}$/.test(keyId)) return undefined;
    const matches = this.list(fleetId).filter((k) => k.keyHash.startsWith(keyId.toLowerCase()));
    return matches.length === 1 ? matches[0] : undefined;
  }

  /**
   * A new key (returned once) and the old one's end at `revokeAtMs`, in one transaction: never a
   * new key without the old one's end, nor the reverse.
   */
  rotate(
    fleetId: string,
    oldKeyHash: string,
    label: string,
    revokeAtMs: number,
    at: string,
  ): string {
    return this.db.transaction(() => {
      const created = this.create(fleetId, label, at);
      this.revokeHash(oldKeyHash, revokeAtMs, at);
      return created;
    })();
  }

  /** The fleet the key belongs to, or undefined for an unknown or revoked key. */
  fleetFor(apiKey: string): string | undefined {
    const hash = sha256Hex(apiKey);
    const row = this.findStmt.get(hash, this.clock.now());
    return row && sameHash(row.key_hash, hash) ? row.fleet_id : undefined;
  }

  /** The fleet a key hash (hex SHA-256) is registered to, revoked or not. */
  ownerOfHash(keyHash: string): string | undefined {
    return this.ownerStmt.get(keyHash)?.fleet_id;
  }

  /** Registers a key known only by its hash (rotation from the fleet's cloud); idempotent. */
  registerHash(fleetId: string, keyHash: string, label: string, at: string): boolean {
    return this.insertStmt.run(keyHash, fleetId, label, at).changes === 1;
  }

  /** The key stops being accepted at `revokeAtMs` (now or after an overlap). */
  revokeHash(keyHash: string, revokeAtMs: number, at: string): void {
    this.revokeStmt.run(keyHash, revokeAtMs, at);
  }

  /** Registers a key (idempotent); returns false when it was already there. */
  register(fleetId: string, apiKey: string, label: string, at: string): boolean {
    return this.insertStmt.run(sha256Hex(apiKey), fleetId, label, at).changes === 1;
  }

  /** Creates a new random key; the caller shows it once, it is never stored in clear. */
  create(fleetId: string, label: string, at: string): string {
    const key = randomSecret(API_KEY_PREFIX);
    this.register(fleetId, key, label, at);
    return key;
  }
}
