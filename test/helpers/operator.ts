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
