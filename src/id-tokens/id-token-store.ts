import { randomBytes } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import { boundTokenKey, maskToken, MAX_TOKEN_LENGTH, trimPadding } from './token-key.js';

export type IdTokenKind = 'card' | 'vehicle';
export type IdTokenType =
  'ISO14443' | 'ISO15693' | 'KeyCode' | 'Local' | 'Central' | 'MacAddress' | 'eMAID';
export const ID_TOKEN_TYPES: readonly IdTokenType[] = [
  'ISO14443',
  'ISO15693',
  'KeyCode',
  'Local',
  'Central',
  'MacAddress',
  'eMAID',
];
export type IdTokenSource = 'operator' | 'cloud';

export interface BoundToken {
  id: string;
  driverId: string;
  kind: IdTokenKind;
  type: IdTokenType;
  /** The value as it was bound (sent as-is in a charger's local list). */
  value: string;
  key: string;
  /** The key's last four characters: what pages, logs and events show. */
  masked: string;
  label: string;
  expiresAt: string | null;
  blockedAt: string | null;
  blockedReason: string | null;
  source: IdTokenSource;
  createdAt: string;
  updatedAt: string;
  unboundAt: string | null;
}

export interface BindInput {
  driverId: string;
  kind: IdTokenKind;
  type: IdTokenType;
  value: string;
  label?: string;
  expiresAt?: string | null;
  source: IdTokenSource;
}

/** The key is bound to another driver: never guessed at the charger, refused at binding. */
export class TokenBoundElsewhereError extends Error {
  constructor(
    readonly key: string,
    readonly driverId: string,
  ) {
    super(`token ${maskToken(key)} is bound to another driver`);
  }
}

export class InvalidTokenValueError extends Error {}

/** What a token presented at a charger is, judged at `nowMs`; the token when it is bound. */
export type TokenJudgement =
  | { status: 'accepted'; token: BoundToken }
  | { status: 'blocked'; token: BoundToken }
  | { status: 'expired'; token: BoundToken }
  | { status: 'unknown' };

interface Row {
  id: string;
  driver_id: string;
  kind: IdTokenKind;
  token_type: IdTokenType;
  token_value: string;
  token_key: string;
  label: string;
  expires_at: string | null;
  blocked_at: string | null;
  blocked_reason: string | null;
  source: IdTokenSource;
  created_at: string;
  updated_at: string;
  unbound_at: string | null;
}

function toToken(r: Row): BoundToken {
  return {
    id: r.id,
    driverId: r.driver_id,
    kind: r.kind,
    type: r.token_type,
    value: r.token_value,
    key: r.token_key,
    masked: maskToken(r.token_key),
    label: r.label,
    expiresAt: r.expires_at,
    blockedAt: r.blocked_at,
    blockedReason: r.blocked_reason,
    source: r.source,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    unboundAt: r.unbound_at,
  };
}

/** Tokens bound to drivers, in SQLite (migration 028). Writes are the caller's transaction. */
export class IdTokenStore {
  private readonly byKeyStmt: Statement<[string], Row>;
  private readonly byIdStmt: Statement<[string], Row>;
  private readonly ofDriverStmt: Statement<[string], Row>;
  private readonly insertStmt: Statement<Row>;
  private readonly updateStmt: Statement<{
    id: string;
    kind: IdTokenKind;
    token_type: IdTokenType;
    token_value: string;
    label: string;
    expires_at: string | null;
    source: IdTokenSource;
    updated_at: string;
  }>;
  private readonly blockStmt: Statement<[string | null, string | null, string, string]>;
  private readonly unbindStmt: Statement<{ at: string; id: string }>;

  constructor(db: Db) {
    this.byKeyStmt = db.prepare(
      'SELECT * FROM id_tokens WHERE token_key = ? AND unbound_at IS NULL',
    );
    this.byIdStmt = db.prepare('SELECT * FROM id_tokens WHERE id = ?');
    this.ofDriverStmt = db.prepare(
      'SELECT * FROM id_tokens WHERE driver_id = ? AND unbound_at IS NULL ORDER BY created_at, id',
    );
    this.insertStmt = db.prepare(
      `INSERT INTO id_tokens (id, driver_id, kind, token_type, token_value, token_key, label,
         expires_at, blocked_at, blocked_reason, source, created_at, updated_at, unbound_at)
       VALUES (@id, @driver_id, @kind, @token_type, @token_value, @token_key, @label,
         @expires_at, @blocked_at, @blocked_reason, @source, @created_at, @updated_at, @unbound_at)`,
    );
    this.updateStmt = db.prepare(
      `UPDATE id_tokens SET kind = @kind, token_type = @token_type, token_value = @token_value,
         label = @label, expires_at = @expires_at, source = @source, updated_at = @updated_at
       WHERE id = @id`,
    );
    this.blockStmt = db.prepare(
      'UPDATE id_tokens SET blocked_at = ?, blocked_reason = ?, updated_at = ? WHERE id = ?',
    );
    this.unbindStmt = db.prepare(
      'UPDATE id_tokens SET unbound_at = @at, updated_at = @at WHERE id = @id AND unbound_at IS NULL',
    );
  }

  /** The bound token with this key (any presented form: token-key.ts), or undefined. */
  find(raw: string): BoundToken | undefined {
    const row = this.byKeyStmt.get(boundTokenKey(raw));
    return row ? toToken(row) : undefined;
  }

  get(id: string): BoundToken | undefined {
    const row = this.byIdStmt.get(id);
    return row ? toToken(row) : undefined;
  }

  ofDriver(driverId: string): BoundToken[] {
    return this.ofDriverStmt.all(driverId).map(toToken);
  }

  /**
   * Binds the token to the driver; binding it again to the same driver updates it (idempotent,
   * as a roster message repeated). Bound to another driver: TokenBoundElsewhereError (409).
   */
  bind(input: BindInput, at: string): BoundToken {
    const value = trimPadding(input.value);
    if (value.length === 0 || value.length > MAX_TOKEN_LENGTH) {
      throw new InvalidTokenValueError(
        `a token value has 1 to ${MAX_TOKEN_LENGTH} characters after trimming`,
      );
    }
    const key = boundTokenKey(value);
    const existing = this.byKeyStmt.get(key);
    if (existing && existing.driver_id !== input.driverId) {
      throw new TokenBoundElsewhereError(key, existing.driver_id);
    }
    if (existing) {
      this.updateStmt.run({
        id: existing.id,
        kind: input.kind,
        token_type: input.type,
        token_value: value,
        label: input.label ?? existing.label,
        expires_at: input.expiresAt === undefined ? existing.expires_at : input.expiresAt,
        source: input.source,
        updated_at: at,
      });
      return toToken(this.byIdStmt.get(existing.id) as Row);
    }
    const row: Row = {
      id: `tok_${randomBytes(12).toString('base64url')}`,
      driver_id: input.driverId,
      kind: input.kind,
      token_type: input.type,
      token_value: value,
      token_key: key,
      label: input.label ?? '',
      expires_at: input.expiresAt ?? null,
      blocked_at: null,
      blocked_reason: null,
      source: input.source,
      created_at: at,
      updated_at: at,
      unbound_at: null,
    };
    this.insertStmt.run(row);
    return toToken(row);
  }

  /** Blocks (reason given) or unblocks (null) a bound token; false when no such bound token. */
  setBlocked(id: string, reason: string | null, at: string): boolean {
    const row = this.byIdStmt.get(id);
    if (!row || row.unbound_at !== null) return false;
    this.blockStmt.run(reason === null ? null : at, reason, at, id);
    return true;
  }

  /** Unbinds; the row stays for the sessions that name it. False when not bound. */
  unbind(id: string, at: string): boolean {
    return this.unbindStmt.run({ at, id }).changes === 1;
  }

  /** What the token presented at a charger is at `nowMs` (the driver's own state is the caller's). */
  judge(raw: string, nowMs: number): TokenJudgement {
    const token = this.find(raw);
    if (!token) return { status: 'unknown' };
    if (token.blockedAt !== null) return { status: 'blocked', token };
    if (token.expiresAt !== null && Date.parse(token.expiresAt) <= nowMs)
      return { status: 'expired', token };
    return { status: 'accepted', token };
  }
}
