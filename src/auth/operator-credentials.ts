import { randomUUID } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import { randomSecret, sameHash, sha256Hex } from './secrets.js';

/** Prefix of an operator credential: it can never be mistaken for an API key or a driver token. */
export const OPERATOR_CREDENTIAL_PREFIX = 'fop_';

export const OPERATOR_ROLES = ['viewer', 'operator'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** What a role may do: a viewer reads, an operator reads and acts. */
const ROLE_RANK: Record<OperatorRole, number> = { viewer: 0, operator: 1 };

export function roleAllows(role: OperatorRole, needed: OperatorRole): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[needed];
}

export interface Operator {
  id: string;
  name: string;
  role: OperatorRole;
}

export interface OperatorInfo extends Operator {
  createdAt: string;
  revokedAt: string | null;
}

interface Row {
  id: string;
  name: string;
  role: OperatorRole;
  credential_hash: string;
  created_at: string;
  revoked_at: string | null;
}

export class OperatorNameTakenError extends Error {}

/**
 * Operator credentials: separate from fleet API keys and driver tokens (own table, own prefix),
 * stored only as SHA-256 like them (src/auth/secrets.ts says why a fast hash is enough).
 */
export class OperatorCredentials {
  private readonly byHashStmt: Statement<[string], Row>;
  private readonly byNameStmt: Statement<[string], Row>;
  private readonly insertStmt: Statement<[string, string, OperatorRole, string, string]>;
  private readonly revokeStmt: Statement<[string, string]>;
  private readonly listStmt: Statement<[], Row>;

  constructor(db: Db) {
    this.byHashStmt = db.prepare('SELECT * FROM operators WHERE credential_hash = ?');
    this.byNameStmt = db.prepare('SELECT * FROM operators WHERE name = ?');
    this.insertStmt = db.prepare(
      'INSERT INTO operators (id, name, role, credential_hash, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.revokeStmt = db.prepare(
      'UPDATE operators SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL',
    );
    this.listStmt = db.prepare('SELECT * FROM operators ORDER BY created_at, name');
  }

  /** Creates an operator; the credential is returned once and stored only as its hash. */
  create(name: string, role: OperatorRole, at: string): { operator: Operator; credential: string } {
    if (this.byNameStmt.get(name)) throw new OperatorNameTakenError(`operator ${name} exists`);
    const credential = randomSecret(OPERATOR_CREDENTIAL_PREFIX);
    const operator: Operator = { id: randomUUID(), name, role };
    this.insertStmt.run(operator.id, name, role, sha256Hex(credential), at);
    return { operator, credential };
  }

  /** The operator behind a credential, unless unknown or revoked. */
  check(credential: string): Operator | undefined {
    const hash = sha256Hex(credential);
    const row = this.byHashStmt.get(hash);
    if (!row || row.revoked_at !== null || !sameHash(row.credential_hash, hash)) return undefined;
    return { id: row.id, name: row.name, role: row.role };
  }

  /** Revokes by name; false when there is no such active operator. Takes effect at once. */
  revoke(name: string, at: string): boolean {
    return this.revokeStmt.run(at, name).changes === 1;
  }

  list(): OperatorInfo[] {
    return this.listStmt.all().map((r) => ({
      id: r.id,
      name: r.name,
      role: r.role,
      createdAt: r.created_at,
      revokedAt: r.revoked_at,
    }));
  }
}
