import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer, type RawData } from 'ws';

/** One OCPP-J frame as it passed between a charger and the gateway. */
export interface TappedFrame {
  /** performance.now() when the tap forwarded it: the gateway receives it within a loopback hop. */
  atMs: number;
  /** Date.now() at the same moment: the simulators stamp their meter values on this clock. */
  atEpochMs: number;
  chargerId: string;
  /** 'up': charger → gateway; 'down': gateway → charger. */
  direction: 'up' | 'down';
  message: unknown[];
}

/**
 * A WebSocket relay between the simulators and the gateway: each charger connects to the tap
 * (same path, subprotocol and Authorization header), the tap opens the same connection to the
 * gateway and passes every frame through unchanged, telling its listener first. Tests read the
 * site from the wire the gateway sees (meter values, charging profiles and their answers)
 * without reaching into the gateway or trusting the simulators' own account.
 */
export class WireTap {
  private readonly listeners: ((frame: TappedFrame) => void)[] = [];
  private readonly sockets = new Set<WebSocket>();
  private readonly wss = new WebSocketServer({ noServer: true, handleProtocols: () => false });
  private server?: Server;
  /** ws://127.0.0.1:<port>/<path>: give this to the chargers instead of the gateway's URL. */
  url = '';

  constructor(private readonly upstreamUrl: string) {}

  onFrame(listener: (frame: TappedFrame) => void): void {
    this.listeners.push(listener);
  }

  async start(): Promise<void> {
    const server = createServer((_req, res) => res.writeHead(426).end());
    server.on('upgrade', (req, socket, head) => this.relay(req, socket, head));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    const { port } = server.address() as AddressInfo;
    this.url = `ws://127.0.0.1:${port}${new URL(this.upstreamUrl).pathname}`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    this.wss.close();
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }

  private relay(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = req.url ?? '/';
    const chargerId = decodeURIComponent(path.split('/').pop() ?? '');
    const protocols = (req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const headers: Record<string, string> = {};
    if (req.headers.authorization) headers.authorization = req.headers.authorization;
    const origin = new URL(this.upstreamUrl);
    const upstream = new WebSocket(`${origin.protocol}//${origin.host}${path}`, protocols, {
      headers,
    });
    this.sockets.add(upstream);
    upstream.once('unexpected-response', (_r, res) => {
      socket.end(`HTTP/1.1 ${res.statusCode ?? 502} Refused\r\nConnection: close\r\n\r\n`);
      upstream.terminate();
    });
    upstream.once('error', () => socket.destroy());
    upstream.once('open', () => {
      const chosen = upstream.protocol;
      // The charger gets the subprotocol the gateway chose, as if it had answered directly.
      this.wss.options.handleProtocols = () => chosen || false;
      this.wss.handleUpgrade(req, socket, head, (downstream) => {
        this.sockets.add(downstream);
        this.pipe(downstream, upstream, chargerId, 'up');
        this.pipe(upstream, downstream, chargerId, 'down');
      });
    });
  }

  private pipe(from: WebSocket, to: WebSocket, chargerId: string, direction: 'up' | 'down') {
    from.on('message', (data: RawData, isBinary) => {
      const text = data.toString();
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        message = undefined;
      }
      if (Array.isArray(message)) {
        const frame: TappedFrame = {
          atMs: performance.now(),
          atEpochMs: Date.now(),
          chargerId,
          direction,
          message,
        };
        for (const listener of this.listeners) listener(frame);
      }
      if (to.readyState === WebSocket.OPEN) to.send(text, { binary: isBinary });
    });
    from.on('close', (code) => {
      this.sockets.delete(from);
      if (to.readyState === WebSocket.OPEN || to.readyState === WebSocket.CONNECTING) {
        to.close(code >= 1000 && code < 5000 && code !== 1005 && code !== 1006 ? code : 1000);
      }
    });
    from.on('error', () => to.terminate());
  }
}
