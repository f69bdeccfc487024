import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the receiver does with the next request: answer a status, or never answer. */
export type Answer = number | 'hang';

export interface WebhookRequest {
  headers: IncomingMessage['headers'];
  body: string;
  /** What the receiver did with it. */
  answer: Answer;
}

/**
 * A webhook receiver on 127.0.0.1 (node:http): it records every request with its raw body and
 * answers from a script (`answers`, in order; 200 once it is used up).
 */
export class WebhookReceiver {
  readonly requests: WebhookRequest[] = [];
  readonly answers: Answer[] = [];
  private server: Server | null = null;
  private readonly hanging = new Set<ServerResponse>();

  constructor(private port = 0) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = this.answers.shift() ?? 200;
        const body = Buffer.concat(chunks).toString('utf8');
        this.requests.push({ headers: req.headers, body, answer });
        if (answer === 'hang') {
          this.hanging.add(res);
          return;
        }
        res.writeHead(answer).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** Bodies of the requests, parsed. */
  events(): { id: string; type: string; alert: { kind: string; subject: string } }[] {
    return this.requests.map((r) => JSON.parse(r.body) as ReturnType<WebhookReceiver['events']>[0]);
  }
}
