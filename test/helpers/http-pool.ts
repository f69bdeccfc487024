import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import type { JsonResponse } from './http.js';

/**
 * POSTs over a fixed pool of keep-alive connections (node:http Agent), so that a burst of
 * requests arrives on several sockets at once, as from several app instances behind a NAT.
 */
export class ConnectionPool {
  readonly agent: Agent;
  /** Every socket a request went out on (to show the burst really used several). */
  readonly used = new Set<Socket>();

  constructor(sockets: number) {
    this.agent = new Agent({ keepAlive: true, maxSockets: sockets });
  }

  post(baseUrl: string, path: string, body: unknown, headers: Record<string, string> = {}) {
    const payload = JSON.stringify(body);
    return new Promise<JsonResponse>((resolve, reject) => {
      const req = request(
        `${baseUrl}${path}`,
        {
          method: 'POST',
          agent: this.agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
            ...headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const responseHeaders = new Headers();
            for (const [k, v] of Object.entries(res.headers)) {
              if (typeof v === 'string') responseHeaders.set(k, v);
            }
            resolve({
              status: res.statusCode ?? 0,
              headers: responseHeaders,
              body: text ? (JSON.parse(text) as unknown) : null,
            });
          });
          res.on('error', reject);
        },
      );
      req.on('socket', (socket) => this.used.add(socket));
      req.on('error', reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
