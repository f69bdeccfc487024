import { OperatorCredentials, type OperatorRole } from '../auth/operator-credentials.js';
import type { Db } from '../store/database.js';

export interface DemoLogin {
  name: string;
  role: OperatorRole;
  credential: string;
}

/**
 * A fresh demo operator and demo viewer for this run of the demo. A credential is only ever
 * shown once (the database keeps its hash), so each run makes new ones, named demo-operator,
 * demo-operator-2, ... and revokes the earlier runs' ones: only the login just printed works.
 */
export function demoLogins(db: Db, at: string): { operator: DemoLogin; viewer: DemoLogin } {
  const operators = new OperatorCredentials(db);
  const existing = operators.list();
  const login = (base: string, role: OperatorRole): DemoLogin => {
    const ours = existing.filter((o) => o.name === base || o.name.startsWith(`${base}-`));
    for (const o of ours) if (o.revokedAt === null) operators.revoke(o.name, at);
    const taken = new Set(existing.map((o) => o.name));
    let name = base;
    for (let n = 2; taken.has(name); n += 1) name = `${base}-${n}`;
    return { name, role, credential: operators.create(name, role, at).credential };
  };
  return { operator: login('demo-operator', 'operator'), viewer: login('demo-viewer', 'viewer') };
}
