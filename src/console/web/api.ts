import type { Login } from './types';

/** An answer the gateway refused, with its own words (`{error: {code, message}}`). */
export class ConsoleRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;
let onUnauthorized: () => void = () => undefined;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when the session cookie is no longer good (expired, revoked, logged out elsewhere). */
export function whenUnauthorized(fn: () => void): void {
  onUnauthorized = fn;
}

async function request<T>(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      credentials: 'same-origin',
      headers: {
        accept: 'application/json',
        ...(body === undefined
          ? {}
          : {
              'content-type':
                body instanceof Blob ? 'application/octet-stream' : 'application/json',
            }),
        ...(method !== 'GET' && csrfToken ? { 'x-csrf-token': csrfToken } : {}),
        ...headers,
      },
      ...(body === undefined ? {} : { body: body instanceof Blob ? body : JSON.stringify(body) }),
    });
  } catch {
    throw new ConsoleRequestError(
      0,
      'network',
      'The gateway cannot be reached: check the network.',
    );
  }
  const text = await res.text();
  let json: unknown = null;
  if (text && res.headers.get('content-type')?.includes('application/json')) {
    json = JSON.parse(text);
  }
  if (!res.ok) {
    const error = (json as { error?: { code?: string; message?: string } } | null)?.error;
    if (res.status === 401 && !url.endsWith('/console/session')) onUnauthorized();
    throw new ConsoleRequestError(
      res.status,
      error?.code ?? `http_${res.status}`,
      error?.message ?? `The gateway answered ${res.status} ${res.statusText}.`,
    );
  }
  return json as T;
}

/** The operator API, under /admin/v1. */
export const api = {
  get: <T>(path: string) => request<T>('GET', `/admin/v1${path}`),
  post: <T>(path: string, body?: unknown, headers?: Record<string, string>) =>
    request<T>('POST', `/admin/v1${path}`, body ?? {}, headers),
  put: <T>(path: string, body: unknown) => request<T>('PUT', `/admin/v1${path}`, body),
  delete: <T>(path: string) => request<T>('DELETE', `/admin/v1${path}`),
  /** A file's raw bytes as the body (a firmware upload). */
  upload: <T>(path: string, file: Blob) => request<T>('POST', `/admin/v1${path}`, file),
};

export const session = {
  current: () => request<Login>('GET', '/console/session'),
  login: (name: string, credential: string) =>
    request<Login>('POST', '/console/session', { name, credential }),
  logout: () => request<null>('DELETE', '/console/session'),
};

/** What to show for a failure: the gateway's own message when it gave one. */
export function errorText(e: unknown): string {
  if (e instanceof ConsoleRequestError) return e.message;
  return e instanceof Error ? e.message : String(e);
}
