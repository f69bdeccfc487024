import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import { randomSecret, sameHash, sha256Hex } from './secrets.js';

export const API_KEY_PREFIX = 'fgk_';

/** Fleet API keys, stored only as hashes. */
export class ApiKeys {
  private readonly findStmt: Statement<[string], { key_hash: string; fleet_id: string }>;
  private readonly insertStmt: Statement<[string, string, string, string]>;

  constructor(db: Db) {
    this.findStmt = db.prepare('SELECT key_hash, fleet_id FROM api_keys WHERE key_hash = ?');
    this.insertStmt = db.prepare(
      'INSERT INTO api_keys (key_hash, fleet_id, label, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    );
  }

  /** The fleet the key belongs to, or undefined for an unknown key. */
  fleetFor(apiKey: string): string | undefined {
    const hash = sha256Hex(apiKey);
    const row = this.findStmt.get(hash);
    return row && sameHash(row.key_hash, hash) ? row.fleet_id : undefined;
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
