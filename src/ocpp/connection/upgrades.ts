import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Answers an upgrade that is not for a charger, on the raw socket. The server that attaches
 * passes its own (the API's port answers in the API's error shape); the default has no body.
 */
export type UpgradeRefusal = (socket: Duplex, status: 400 | 404, message: string) => void;

export const bareRefusal: UpgradeRefusal = (socket, status) => {
  const reason = status === 404 ? 'Not Found' : 'Bad Request';
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
};

/** Where an upgrade for a charger goes: the OCPP server's own handling. */
export type HandleUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * Takes WebSocket upgrades for `<path>/<chargePointId>` on an HTTP(S) server (the API's, and the
 * TLS listener for chargers); refuses others.
 */
export function takeUpgrades(
  http: Server,
  path: string,
  handle: HandleUpgrade,
  refuse: UpgradeRefusal,
): void {
  const prefix = `${path}/`;
  http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const requested = (request.url ?? '/').split('?')[0] ?? '/';
    if (!requested.startsWith(prefix)) {
      refuse(socket, 404, 'no WebSocket endpoint at this path');
      return;
    }
    if (!decodableIdentity(requested)) {
      // ocpp-rpc would answer a broken %-escape with a 500.
      refuse(socket, 400, 'the charge point id is not valid percent-encoding');
      return;
    }
    handle(request, socket, head);
  });
}

function decodableIdentity(path: string): boolean {
  try {
    decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
    return true;
  } catch {
    return false;
  }
}
