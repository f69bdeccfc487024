import type { Statement } from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { ApiError } from '../api/errors.js';
import type { Db } from '../store/database.js';

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  /** True when this is the stored answer of an earlier request with the same key. */
  replayed: boolean;
}

/** Canonical JSON (sorted keys) so that the same request always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Idempotency of operator actions by the client's `Idempotency-Key`: the key, the request's hash
 * and the answer are written in the same SQLite transaction as the action's effect, so a retry
 * (lost answer, double click, CLI re-run) gets the first answer and acts no second time. A key
 * sent again with a different request is refused (422). A refused action stores nothing: its
 * retry is judged afresh.
 */
export class OperatorRequests {
  private readonly findStmt: Statement<
    [string],
    { action: string; request_hash: string; status: number; response: string }
  >;
  private readonly insertStmt: Statement<[string, string, string, string, number, string, string]>;

  constructor(private readonly db: Db) {
    this.findStmt = db.prepare(
      'SELECT action, request_hash, status, response FROM operator_requests WHERE key = ?',
    );
    this.insertStmt = db.prepare(
      `INSERT INTO operator_requests (key, action, request_hash, operator_id, status, response, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  once(
    key: string,
    action: string,
    request: unknown,
    operatorId: string,
    at: string,
    act: () => Record<string, unknown>,
  ): Answer {
    const hash = createHash('sha256')
      .update(`${action}\n${canonical(request)}`)
      .digest('hex');
    return this.db.transaction((): Answer => {
      const seen = this.findStmt.get(key);
      if (seen) {
        if (seen.request_hash !== hash) {
          throw new ApiError(
            'idempotency_key_reused',
            'this Idempotency-Key was already used for a different request',
          );
        }
        return {
          status: seen.status,
          body: JSON.parse(seen.response) as Record<string, unknown>,
          replayed: true,
        };
      }
      const body = act();
      this.insertStmt.run(key, action, hash, operatorId, 200, JSON.stringify(body), at);
      return { status: 200, body, replayed: false };
    })();
  }
}
