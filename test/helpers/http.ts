/** The headers every API answer carries on plain HTTP (docs/security.md, "HTTP"). */
export const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

export async function post(
  baseUrl: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as unknown) : null,
  };
}

export async function mintToken(
  baseUrl: string,
  apiKey: string,
  driverEmail: string,
): Promise<string> {
  const res = await post(
    baseUrl,
    '/v1/driver-tokens',
    { driverEmail },
    { authorization: `ApiKey ${apiKey}` },
  );
  if (res.status !== 200) throw new Error(`mint failed: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { token: string }).token;
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** Asserts the contract's error shape and returns the code. */
export function errorCode(res: JsonResponse): string {
  const body = res.body as { error?: { code?: unknown; message?: unknown } };
  if (
    !body?.error ||
    typeof body.error.code !== 'string' ||
    typeof body.error.message !== 'string'
  ) {
    throw new Error(`not an error body: ${JSON.stringify(res.body)}`);
  }
  if (Object.keys(body).length !== 1 || Object.keys(body.error).length !== 2) {
    throw new Error(`error body has extra fields: ${JSON.stringify(res.body)}`);
  }
  return body.error.code;
}

export interface SessionTarget {
  chargerId: string;
  connectorId: string;
  driverEmail: string;
}

export function quote(
  baseUrl: string,
  token: string,
  target: SessionTarget,
): Promise<JsonResponse> {
  return post(baseUrl, '/v1/sessions/quote', target, bearer(token));
}

export function startSession(
  baseUrl: string,
  token: string,
  target: SessionTarget,
  amount: number,
): Promise<JsonResponse> {
  return post(baseUrl, '/v1/sessions', { ...target, amount }, bearer(token));
}
