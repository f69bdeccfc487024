import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestPki, type TestPki } from './helpers/certs.js';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { SECURITY_HEADERS } from './helpers/http.js';

/**
 * Requests that Node's HTTP parser or fastify's router refuse before any route runs, sent as raw
 * bytes to a real gateway: every answer is `{ error: { code, message } }` with the API's security
 * headers (docs/api.md, "Errors").
 */

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One connection: bytes in, HTTP/1.1 responses out (interim 1xx answers kept apart). */
class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiter: (() => void) | undefined;
  closed = false;
  readonly interim: number[] = [];

  constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.waiter?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiter?.();
    });
    socket.on('error', () => undefined); // a reset after the answer is the server closing
  }

  static open(port: number, tls?: { ca: Buffer }): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = tls
        ? tlsConnect({ port, host: '127.0.0.1', ca: tls.ca, servername: 'localhost' }, () =>
            resolve(new RawConnection(socket)),
          )
        : connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  write(bytes: string): void {
    this.socket.write(bytes);
  }

  /** The next final response (interim 1xx ones are noted in `interim`). */
  async response(): Promise<RawResponse> {
    for (;;) {
      const parsed = await this.next();
      if (parsed.status >= 200) return parsed;
      this.interim.push(parsed.status);
    }
  }

  /** The next response of any kind; bounded: one that does not come in 5 s fails the test. */
  async next(): Promise<RawResponse> {
    for (;;) {
      const parsed = this.parse();
      if (parsed) return parsed;
      if (this.closed) throw new Error(`connection closed with ${this.buffer.length} bytes unread`);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no response in 5 s')), 5_000);
        this.waiter = () => {
          clearTimeout(timer);
          this.waiter = undefined;
          resolve();
        };
      });
    }
  }

  /** Resolves once the server has closed the connection (bounded like response()). */
  async closedByServer(): Promise<boolean> {
    if (this.closed) return true;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('connection still open after 5 s')), 5_000);
      this.waiter = () => {
        if (!this.closed) return;
        clearTimeout(timer);
        resolve();
      };
    });
    return true;
  }

  destroy(): void {
    this.socket.destroy();
  }

  private parse(): RawResponse | undefined {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const head = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head[0] ?? '')?.[1]);
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffer.length < end + 4 + length) return undefined;
    const body = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    this.buffer = this.buffer.subarray(end + 4 + length);
    return { status, headers, body };
  }
}

/** Sends one request on a fresh connection and returns its answer. */
async function exchange(port: number, bytes: string, tls?: { ca: Buffer }): Promise<RawResponse> {
  const conn = await RawConnection.open(port, tls);
  try {
    conn.write(bytes);
    return await conn.response();
  } finally {
    conn.destroy();
  }
}

/** The contract's error shape, exactly: no other key at either level. */
function expectErrorShape(res: RawResponse, status: number, code: string): string {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.headers).toMatchObject(SECURITY_HEADERS);
  const body = JSON.parse(res.body) as { error: { code: string; message: string } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  return body.error.message;
}

const MINT_BODY = JSON.stringify({ driverEmail: DRIVERS.ada.email });
const authed = `Authorization: ApiKey ${API_KEY}\r\n`;
const mintHead = (headers: string) =>
  `POST /v1/driver-tokens HTTP/1.1\r\nHost: gw\r\n${authed}${headers}\r\n`;

let t: TestGateway;
let port: number;
beforeAll(async () => {
  t = await startTestGateway();
  port = Number(new URL(t.gw.url).port);
});
afterAll(async () => {
  await t.close();
});

describe("refused by Node's HTTP parser: answered raw on the socket, then closed", () => {
  const cases: { name: string; bytes: string; status: number; code: string }[] = [
    {
      name: 'a Content-Length that is not a number',
      bytes: mintHead('Content-Type: application/json\r\nContent-Length: abc\r\n') + MINT_BODY,
      status: 400,
      code: 'invalid_request',
    },
    {
      name: 'two conflicting Content-Lengths',
      bytes:
        mintHead(
          `Content-Type: application/json\r\nContent-Length: ${MINT_BODY.length}\r\nContent-Length: 3\r\n`,
        ) + MINT_BODY,
      status: 400,
      code: 'invalid_request',
    },
    {
      name: 'Content-Length together with Transfer-Encoding: chunked (request smuggling)',
      bytes:
        mintHead(
          `Content-Type: application/json\r\nContent-Length: ${MINT_BODY.length}\r\nTransfer-Encoding: chunked\r\n`,
        ) + MINT_BODY,
      status: 400,
      code: 'invalid_request',
    },
    {
      name: 'a Transfer-Encoding other than chunked',
      bytes: mintHead('Content-Type: application/json\r\nTransfer-Encoding: gzip\r\n'),
      status: 400,
      code: 'invalid_request',
    },
    {
      name: 'a malformed chunk',
      bytes:
        mintHead('Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n') + 'zz\r\n',
      status: 400,
      code: 'invalid_request',
    },
    {
      name: 'headers above the server limit',
      bytes: `GET /healthz HTTP/1.1\r\nHost: gw\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`,
      status: 431,
      code: 'headers_too_large',
    },
    {
      name: 'a request line above the server limit',
      bytes: `GET /${'a'.repeat(70_000)} HTTP/1.1\r\nHost: gw\r\n\r\n`,
      status: 431,
      code: 'headers_too_large',
    },
    {
      name: 'a request line that is not HTTP',
      bytes: 'HELLO WORLD\r\n\r\n',
      status: 400,
      code: 'invalid_request',
    },
    {
      name: 'an unsupported HTTP version',
      bytes: 'GET /healthz HTTP/9.9\r\nHost: gw\r\n\r\n',
      status: 400,
      code: 'invalid_request',
    },
    {
      name: 'a header name with a space',
      bytes: 'GET /healthz HTTP/1.1\r\nHost: gw\r\nBad Header: x\r\n\r\n',
      status: 400,
      code: 'invalid_request',
    },
  ];

  for (const c of cases) {
    it(`${c.name}: ${c.status} ${c.code}`, async () => {
      const conn = await RawConnection.open(port);
      try {
        conn.write(c.bytes);
        const res = await conn.response();
        const message = expectErrorShape(res, c.status, c.code);
        expect(res.headers.connection).toBe('close');
        expect(await conn.closedByServer()).toBe(true);
        // The answer never echoes what was sent (the API key, the padding).
        expect(message).not.toContain(API_KEY);
        expect(message).not.toContain('aaaa');
      } finally {
        conn.destroy();
      }
    });
  }

  it('a parser error after a complete answer on a keep-alive connection still gets its own answer', async () => {
    const conn = await RawConnection.open(port);
    try {
      conn.write('GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n');
      expect((await conn.response()).status).toBe(200);
      conn.write('GET /healthz HTTP/1.1\r\nHost: gw\r\nContent-Length: -1\r\n\r\n');
      expectErrorShape(await conn.response(), 400, 'invalid_request');
      expect(await conn.closedByServer()).toBe(true);
    } finally {
      conn.destroy();
    }
  });
});

describe('refused by fastify or the API before a route runs', () => {
  it('malformed percent-encoding in the path: 400 invalid_request', async () => {
    for (const path of ['/v1/%E0%A4%A', '/v1/sessions%zz', '/%']) {
      const res = await exchange(port, `GET ${path} HTTP/1.1\r\nHost: gw\r\n\r\n`);
      const message = expectErrorShape(res, 400, 'invalid_request');
      expect(message).not.toContain('%');
    }
  });

  it('an Expect other than 100-continue: 417 expectation_failed, nothing done', async () => {
    const res = await exchange(
      port,
      mintHead(
        `Content-Type: application/json\r\nContent-Length: ${MINT_BODY.length}\r\nExpect: a-pony\r\n`,
      ) + MINT_BODY,
    );
    expectErrorShape(res, 417, 'expectation_failed');
    const minted = t.gw.db.prepare('SELECT COUNT(*) AS n FROM driver_tokens').get() as {
      n: number;
    };
    expect(minted.n).toBe(0);
  });

  it('Expect: 100-continue is honoured: 100 Continue, then the body, then the answer', async () => {
    const conn = await RawConnection.open(port);
    try {
      conn.write(
        mintHead(
          `Content-Type: application/json\r\nContent-Length: ${MINT_BODY.length}\r\nExpect: 100-continue\r\n`,
        ),
      );
      // As a client that honours Expect does: the body only after the interim answer.
      expect((await conn.next()).status).toBe(100);
      conn.write(MINT_BODY);
      const res = await conn.response();
      expect(res.status).toBe(200);
      expect(res.headers).toMatchObject(SECURITY_HEADERS);
      expect(Object.keys(JSON.parse(res.body) as object).sort()).toEqual(['expiresAt', 'token']);
    } finally {
      conn.destroy();
    }
  });

  it('HTTP/1.1 without Host: 400 invalid_request (HTTP/1.0 needs none)', async () => {
    expectErrorShape(await exchange(port, 'GET /healthz HTTP/1.1\r\n\r\n'), 400, 'invalid_request');
    const old = await exchange(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
  });

  it('a body that is not JSON: 400 invalid_request', async () => {
    const res = await exchange(
      port,
      mintHead('Content-Type: application/json\r\nContent-Length: 5\r\n') + '{"a":',
    );
    expectErrorShape(res, 400, 'invalid_request');
  });

  it('a body of another media type: 415 unsupported_media_type', async () => {
    for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
      const res = await exchange(
        port,
        mintHead(`Content-Type: ${type}\r\nContent-Length: 4\r\n`) + 'a=bc',
      );
      expectErrorShape(res, 415, 'unsupported_media_type');
    }
  });

  it('a body above http.bodyLimitBytes: 413 payload_too_large, declared or chunked', async () => {
    const big = 'x'.repeat(20_000);
    const declared = await exchange(
      port,
      mintHead(`Content-Type: application/json\r\nContent-Length: ${big.length}\r\n`) + big,
    );
    expectErrorShape(declared, 413, 'payload_too_large');
    const chunked = await exchange(
      port,
      mintHead('Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n') +
        `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`,
    );
    expectErrorShape(chunked, 413, 'payload_too_large');
  });

  it('an unknown route: 404 not_found; a known path with the wrong method: 405 with Allow', async () => {
    expectErrorShape(
      await exchange(port, 'GET /nowhere HTTP/1.1\r\nHost: gw\r\n\r\n'),
      404,
      'not_found',
    );
    const wrong = await exchange(port, 'DELETE /v1/sessions HTTP/1.1\r\nHost: gw\r\n\r\n');
    expectErrorShape(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.allow).toBe('POST');
  });

  it('a WebSocket upgrade outside the OCPP path: 404 not_found in the same shape', async () => {
    const res = await exchange(
      port,
      'GET /v1/sessions HTTP/1.1\r\nHost: gw\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
        'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );
    expectErrorShape(res, 404, 'not_found');
  });
});

describe('over TLS (http.tls)', () => {
  let pki: TestPki;
  let tt: TestGateway;
  beforeAll(async () => {
    pki = makeTestPki();
    tt = await startTestGateway({
      http: { host: '127.0.0.1', port: 0, tls: { cert: pki.serverCert, key: pki.serverKey } },
    });
  });
  afterAll(async () => {
    await tt?.close();
    pki?.remove();
  });

  it('raw parser and router refusals carry HSTS like every other answer', async () => {
    const tlsPort = Number(new URL(tt.gw.url).port);
    const ca = { ca: pki.read(pki.caCert) };
    const hsts = { 'strict-transport-security': 'max-age=31536000' };
    const refusals: [string, number, string][] = [
      ['GET /healthz HTTP/1.1\r\nHost: gw\r\nContent-Length: x\r\n\r\n', 400, 'invalid_request'],
      ['GET /v1/%zz HTTP/1.1\r\nHost: gw\r\n\r\n', 400, 'invalid_request'],
      ['GET /healthz HTTP/1.1\r\nHost: gw\r\nExpect: a-pony\r\n\r\n', 417, 'expectation_failed'],
    ];
    for (const [bytes, status, code] of refusals) {
      const res = await exchange(tlsPort, bytes, ca);
      expectErrorShape(res, status, code);
      expect(res.headers).toMatchObject(hsts);
    }
  });
});
