import { createHash } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';

/** What a Start asks for, apart from the driver (keys are scoped to the driver already). */
export interface StartRequestFields {
  chargerId: string;
  connectorId: string;
  amount: number;
}

export interface IdempotencyRecord {
  requestHash: string;
  sessionId: string;
}

/**
 * SHA-256 of the canonical request: the fields in a fixed order, so that key order or whitespace
 * in the JSON body cannot make one request look like another. The driver's email is not in it: it
 * must name the token's driver anyway, and keys are per driver.
 */
export function requestHash(request: StartRequestFields): string {
  const canonical = JSON.stringify([request.chargerId, request.connectorId, request.amount]);
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * `Idempotency-Key`s of Start requests. A key is recorded only together with a debit (in the
 * debit's transaction); a Start refused before any money moved leaves the key unused.
 */
export class IdempotencyKeys {
  private readonly findStmt: Statement<
    [string, string],
    { request_hash: string; session_id: string }
  >;
  private readonly insertStmt: Statement<[string, string, string, string, string]>;

  constructor(db: Db) {
    this.findStmt = db.prepare(
      'SELECT request_hash, session_id FROM idempotency_keys WHERE driver_id = ? AND key = ?',
    );
    this.insertStmt = db.prepare(
      `INSERT INTO idempotency_keys (driver_id, key, request_hash, session_id, created_at)
       VALUES (?, ?, ?, ?, ?)`,
    );
  }

  find(driverId: string, key: string): IdempotencyRecord | undefined {
    const row = this.findStmt.get(driverId, key);
    return row ? { requestHash: row.request_hash, sessionId: row.session_id } : undefined;
  }

  record(driverId: string, key: string, hash: string, sessionId: string, at: string): void {
    this.insertStmt.run(driverId, key, hash, sessionId, at);
  }
}
