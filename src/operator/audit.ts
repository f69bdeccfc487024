import type { Statement } from 'better-sqlite3';
import type { Operator } from '../auth/operator-credentials.js';
import { boundTokenKey, maskToken } from '../id-tokens/token-key.js';
import type { Db } from '../store/database.js';

/** Fields whose values never reach the audit trail, wherever they sit in the parameters. */
const SECRET_FIELDS = new Set([
  'password',
  'passwordhash',
  'credential',
  'token',
  'apikey',
  'key',
  'secret',
  'authorization',
]);

/** The parameters with every secret-looking field replaced, so the trail can be shown to anyone. */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_FIELDS.has(k.toLowerCase()) ? '[redacted]' : redactSecrets(v);
  }
  return out;
}

/**
 * A body with its token fields (a card's UID, a vehicle's id) masked as pages show them: the trail
 * says which card an operator bound without holding what a copy of the card needs.
 */
export function maskTokenFields(body: unknown, fields: readonly string[] | undefined): unknown {
  if (!fields || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const f of fields) {
    const v = out[f];
    if (v !== undefined) out[f] = typeof v === 'string' ? maskToken(boundTokenKey(v)) : '[masked]';
  }
  return out;
}

export interface AuditRecord {
  seq: number;
  at: string;
  operatorId: string;
  operatorName: string;
  action: string;
  params: unknown;
  status: number;
  result: unknown;
}

interface Row {
  seq: number;
  at: string;
  operator_id: string;
  operator_name: string;
  action: string;
  params: string;
  status: number;
  result: string;
}

/** The operator audit trail: append-only in the schema (triggers refuse updates and deletes). */
export class AuditTrail {
  private readonly insertStmt: Statement<[string, string, string, string, string, number, string]>;
  private readonly pageStmt: Statement<[number, number], Row>;

  constructor(db: Db) {
    this.insertStmt = db.prepare(
      `INSERT INTO operator_audit (at, operator_id, operator_name, action, params, status, result)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.pageStmt = db.prepare(
      'SELECT * FROM operator_audit WHERE seq < ? ORDER BY seq DESC LIMIT ?',
    );
  }

  record(
    operator: Operator,
    action: string,
    params: unknown,
    status: number,
    result: unknown,
    at: string,
  ): void {
    this.insertStmt.run(
      at,
      operator.id,
      operator.name,
      action,
      JSON.stringify(redactSecrets(params) ?? {}),
      status,
      JSON.stringify(redactSecrets(result) ?? {}),
    );
  }

  /** Newest first, below `beforeSeq`. */
  page(beforeSeq: number, limit: number): AuditRecord[] {
    return this.pageStmt.all(beforeSeq, limit).map((r) => ({
      seq: r.seq,
      at: r.at,
      operatorId: r.operator_id,
      operatorName: r.operator_name,
      action: r.action,
      params: JSON.parse(r.params) as unknown,
      status: r.status,
      result: JSON.parse(r.result) as unknown,
    }));
  }
}
