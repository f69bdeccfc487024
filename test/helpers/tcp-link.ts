import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './mqtt-broker.js';

/**
 * A TCP relay on a free 127.0.0.1 port to a target port: a network link a test can cut (every
 * connection dropped mid-stream, new ones refused) and restore, while both ends keep running.
 */
export class TcpLink {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly port: number,
    private readonly targetPort: number,
  ) {}

  static async open(targetPort: number): Promise<TcpLink> {
    const link = new TcpLink(await freePort(), targetPort);
    await link.restore();
    return link;
  }

  get up(): boolean {
    return this.server !== null;
  }

  async restore(): Promise<void> {
    if (this.server) return;
    const server = createServer((inbound) => {
      const outbound = createConnection({ host: '127.0.0.1', port: this.targetPort });
      for (const [a, b] of [
        [inbound, outbound],
        [outbound, inbound],
      ] as const) {
        this.sockets.add(a);
        a.on('close', () => this.sockets.delete(a));
        a.on('error', () => b.destroy());
        a.on('close', () => b.destroy());
        a.pipe(b);
      }
    });
    await new Promise<void>((r) => server.listen(this.port, '127.0.0.1', r));
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    const closed = new Promise((r) => server.close(r));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}
