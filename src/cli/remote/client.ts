import { readFileSync } from 'node:fs';

/**
 * The CLI's way to the running gateway's operator API. The credential comes from the
 * environment (FLEET_GATEWAY_OPERATOR_CREDENTIAL) or a file (--credential-file or
 * FLEET_GATEWAY_OPERATOR_CREDENTIAL_FILE), never from the command line, where `ps` and shell
 * history would keep it.
 */
export const OPERATOR_URL_ENV = 'FLEET_GATEWAY_OPERATOR_URL';
export const OPERATOR_CREDENTIAL_ENV = 'FLEET_GATEWAY_OPERATOR_CREDENTIAL';
export const OPERATOR_CREDENTIAL_FILE_ENV = 'FLEET_GATEWAY_OPERATOR_CREDENTIAL_FILE';
export const DEFAULT_OPERATOR_URL = 'http://127.0.0.1:8080';

/** The API answered with `{error:{code,message}}` (or not with JSON at all). */
export class OperatorApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ClientSource {
  url?: string | undefined;
  credentialFile?: string | undefined;
}

export type Query = Record<string, string | number | undefined>;

export class OperatorClient {
  private readonly base: string;

  constructor(
    url: string,
    private readonly credential: string,
  ) {
    this.base = `${url.replace(/\/+$/, '')}/admin/v1`;
  }

  /** From options, then the environment; throws a message for a person when none is found. */
  static from(source: ClientSource, env: NodeJS.ProcessEnv = process.env): OperatorClient {
    const url = source.url ?? env[OPERATOR_URL_ENV] ?? DEFAULT_OPERATOR_URL;
    const file = source.credentialFile ?? env[OPERATOR_CREDENTIAL_FILE_ENV];
    const credential = file ? readFileSync(file, 'utf8').trim() : env[OPERATOR_CREDENTIAL_ENV];
    if (!credential) {
      throw new Error(
        `no operator credential: set ${OPERATOR_CREDENTIAL_ENV}, or ${OPERATOR_CREDENTIAL_FILE_ENV} / --credential-file to a file holding it`,
      );
    }
    return new OperatorClient(url, credential);
  }

  get<T>(path: string, query: Query = {}): Promise<T> {
    return this.json<T>('GET', path + queryString(query));
  }

  /**
   * An action. `idempotencyKey` makes a retry safe: the gateway answers it with the first answer
   * and does not act twice (money routes require one; the CLI makes one per invocation).
   */
  send<T>(
    method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
    idempotencyKey?: string,
  ): Promise<T> {
    return this.json<T>(method, path, body, idempotencyKey);
  }

  /** A file's bytes as the body (application/octet-stream), JSON back. */
  async upload<T>(path: string, query: Query, file: Blob): Promise<T> {
    const res = await this.fetch('POST', path + queryString(query), file);
    if (!res.ok) throw await asError(res);
    return (await res.json()) as T;
  }

  /** A binary answer (a firmware file, a charger's log), as the response to read. */
  async download(path: string): Promise<Response> {
    const res = await this.fetch('GET', path);
    if (!res.ok) throw await asError(res);
    return res;
  }

  /** A text answer (CSV exports) as it arrives, chunk by chunk. */
  async *text(path: string, query: Query = {}): AsyncGenerator<string> {
    const res = await this.fetch('GET', path + queryString(query));
    if (!res.ok) throw await asError(res);
    if (!res.body) return;
    const decoder = new TextDecoder();
    for await (const chunk of res.body) yield decoder.decode(chunk as Uint8Array, { stream: true });
  }

  private async json<T>(
    method: string,
    path: string,
    body?: unknown,
    idempotencyKey?: string,
  ): Promise<T> {
    const res = await this.fetch(method, path, body, idempotencyKey);
    if (!res.ok) throw await asError(res);
    return (await res.json()) as T;
  }

  private async fetch(
    method: string,
    path: string,
    body?: unknown,
    idempotencyKey?: string,
  ): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.credential}` };
    const raw = body instanceof Blob;
    if (body !== undefined)
      headers['content-type'] = raw ? 'application/octet-stream' : 'application/json';
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    try {
      return await fetch(this.base + path, {
        method,
        headers,
        ...(body === undefined ? {} : { body: raw ? body : JSON.stringify(body) }),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? String(err);
      throw new OperatorApiError(0, 'unreachable', `cannot reach ${this.base}: ${cause}`);
    }
  }
}

function queryString(query: Query): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

async function asError(res: Response): Promise<OperatorApiError> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (body.error?.code)
      return new OperatorApiError(res.status, body.error.code, body.error.message ?? '');
  } catch {
    // not JSON: report the status
  }
  return new OperatorApiError(res.status, 'http_error', `HTTP ${res.status}`);
}

/** Rows as an aligned text table (the CLI's output without --json). */
export function formatTable(
  rows: readonly Record<string, unknown>[],
  columns: readonly string[],
): string {
  const cell = (v: unknown) =>
    v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}
