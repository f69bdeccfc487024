import type { Statement } from 'better-sqlite3';
import type { Operator, OperatorRole } from './operator-credentials.js';
import { randomSecret, sha256Hex } from './secrets.js';
import type { Db } from '../store/database.js';

/** A live console login: who it is and the token its non-GET requests must echo. */
export interface ConsoleLogin {
  operator: Operator;
  csrfToken: string;
  expiresAtMs: number;
}

interface Row {
  operator_id: string;
  name: string;
  role: OperatorRole;
  csrf_token: string;
  expires_at_ms: number;
}

/**
 * Console logins, kept server side (the console_sessions table): the browser holds only a random
 * cookie value, the table only its SHA-256. A login is looked up with its operator on every
 * request, so revoking the operator or passing the expiry ends it at once.
 */
export class ConsoleLogins {
  private readonly insertStmt: Statement<[string, string, string, string, number]>;
  private readonly findStmt: Statement<[string, number], Row>;
  private readonly deleteStmt: Statement<[string]>;
  private readonly pruneStmt: Statement<[number]>;

  constructor(db: Db) {
    this.insertStmt = db.prepare(
      `INSERT INTO console_sessions (cookie_hash, operator_id, csrf_token, created_at, expires_at_ms)
       VALUES (?, ?, ?, ?, ?)`,
    );
    this.findStmt = db.prepare(
      `SELECT s.operator_id, o.name, o.role, s.csrf_token, s.expires_at_ms
       FROM console_sessions s JOIN operators o ON o.id = s.operator_id
       WHERE s.cookie_hash = ? AND s.expires_at_ms > ? AND o.revoked_at IS NULL`,
    );
    this.deleteStmt = db.prepare('DELETE FROM console_sessions WHERE cookie_hash = ?');
    this.pruneStmt = db.prepare('DELETE FROM console_sessions WHERE expires_at_ms <= ?');
  }

  /** Opens a login; the cookie value is returned once and stored only as its hash. */
  open(operator: Operator, nowMs: number, ttlMs: number): { cookie: string; login: ConsoleLogin } {
    // Expired rows go here, at the only place rows are added: the table stays as small as the
    // number of live logins without a timer of its own.
    this.pruneStmt.run(nowMs);
    const cookie = randomSecret('');
    const login: ConsoleLogin = {
      operator,
      csrfToken: randomSecret(''),
      expiresAtMs: nowMs + ttlMs,
    };
    this.insertStmt.run(
      sha256Hex(cookie),
      operator.id,
      login.csrfToken,
      new Date(nowMs).toISOString(),
      login.expiresAtMs,
    );
    return { cookie, login };
  }

  /** The login behind a cookie value, unless unknown, expired, logged out or its operator revoked. */
  find(cookie: string, nowMs: number): ConsoleLogin | undefined {
    const row = this.findStmt.get(sha256Hex(cookie), nowMs);
    if (!row) return undefined;
    return {
      operator: { id: row.operator_id, name: row.name, role: row.role },
      csrfToken: row.csrf_token,
      expiresAtMs: row.expires_at_ms,
    };
  }

  /** Ends a login (logout); false when there was none. */
  close(cookie: string): boolean {
    return this.deleteStmt.run(sha256Hex(cookie)).changes === 1;
  }
}
