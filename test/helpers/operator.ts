import { randomUUID } from 'node:crypto';
import { OperatorCredentials, type OperatorRole } from '../../src/auth/operator-credentials.js';
import type { Db } from '../../src/store/database.js';
import type { JsonResponse } from './http.js';

/** Creates an operator straight in the gateway's database (as `fleet-gateway operator create`). */
export function createOperator(db: Db, name: string, role: OperatorRole): string {
  return new OperatorCredentials(db).create(name, role, new Date().toISOString()).credential;
}

/** A request to the operator API; `credential` null sends no Authorization header. */
export async function op(
  baseUrl: string,
  credential: string | null,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  const res = await fetch(`${baseUrl}/admin/v1${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(credential === null ? {} : { authorization: `Bearer ${credential}` }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('application/json');
  return {
    status: res.status,
    headers: res.headers,
    body: text && json ? (JSON.parse(text) as unknown) : text,
  };
}

const healthReaders = new WeakMap<Db, string>();

/**
 * GET /admin/v1/health (the details /healthz keeps to operators) as a viewer made once per
 * database handle.
 */
export async function gatewayHealth<T = Record<string, unknown>>(
  operatorUrl: string,
  db: Db,
): Promise<T> {
  let credential = healthReaders.get(db);
  if (credential === undefined) {
    credential = createOperator(db, `health-${randomUUID().slice(0, 8)}`, 'viewer');
    healthReaders.set(db, credential);
  }
  const res = await op(operatorUrl, credential, 'GET', '/health');
  if (res.status !== 200) throw new Error(`GET /admin/v1/health answered ${res.status}`);
  return res.body as T;
}
