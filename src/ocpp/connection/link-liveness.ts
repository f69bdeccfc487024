import { clearTimeout, setTimeout } from 'node:timers';
import WebSocket from 'ws';

/**
 * The WebSocket class the OCPP server's connections are made of (ws `WebSocketServer`'s
 * `WebSocket` option): a link is judged by everything the charger sends. Any frame (a call, an
 * answer, a ping, a pong) proves it alive; only after a full interval without one is a ping
 * sent, and only a link still silent an interval after that is dropped. ocpp-rpc's own keep-alive
 * drops a charger that never answers pings even while it sends every second, and a charger that
 * talks is not one whose session should lose its stop to a reconnect. One timer per link, of one
 * duration, pushed back by each frame, on the socket's real time (node:timers, like ocpp-rpc's
 * own timers): a test that fakes the global timers to move the gateway's clock does not move it.
 */
export function keptAliveSocket(pingIntervalMs: number): typeof WebSocket {
  return class KeptAliveSocket extends WebSocket implements Watched {
    pinged = false;
    readonly silence: NodeJS.Timeout;

    // ws builds a server's connections as `new WebSocket(null, undefined, serverOptions)`, a
    // shape its typings keep private: what it passes goes through as it is.
    constructor(...args: unknown[]) {
      super(...(args as ConstructorParameters<typeof WebSocket>));
      this.silence = setTimeout(silent, pingIntervalMs, this).unref();
      this.on('message', heard);
      this.on('ping', heard);
      this.on('pong', heard);
      this.once('close', closed);
    }
  };
}

/** A kept-alive socket as its listeners and timer see it. */
interface Watched extends WebSocket {
  pinged: boolean;
  readonly silence: NodeJS.Timeout;
}

// The listeners and the timer's callback are shared by every link (each called with its socket),
// not closures made per link.
function heard(this: WebSocket): void {
  const socket = this as Watched;
  socket.pinged = false;
  socket.silence.refresh();
}

function closed(this: WebSocket): void {
  // Ref'd as it is cleared, so Node drops its timer list too (shared/unref-timer.ts).
  clearTimeout((this as Watched).silence.ref());
}

function silent(socket: Watched): void {
  if (socket.readyState !== WebSocket.OPEN) return;
  if (socket.pinged) {
    socket.terminate();
    return;
  }
  socket.pinged = true;
  socket.silence.refresh();
  socket.ping();
}
