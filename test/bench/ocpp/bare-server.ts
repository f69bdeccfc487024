import ocppRpc from 'ocpp-rpc';
import type { BareReady } from './protocol.js';

/**
 * The reference for the OCPP capacity bench (a forked child): a bare ocpp-rpc server with the
 * gateway's RPCServer options (both subprotocols, strictMode, the same frame limit) answering every
 * message the bench chargers send with a constant. No auth, no database: the ceiling of the library.
 */
const { RPCServer } = ocppRpc;

const server = new RPCServer({
  protocols: ['ocpp1.6', 'ocpp2.0.1'],
  strictMode: true,
  callTimeoutMs: 15_000,
  pingIntervalMs: 30_000,
  respondWithDetailedErrors: false,
  wssOptions: { maxPayload: 65_536 },
});

const currentTime = () => new Date().toISOString();
let nextTransactionId = 1;

interface Client {
  protocol: string | undefined;
  handle(method: string, handler: (call: { params: Record<string, unknown> }) => unknown): void;
}

server.on('client', (client: Client) => {
  client.handle('BootNotification', () => ({
    status: 'Accepted',
    currentTime: currentTime(),
    interval: 300,
  }));
  client.handle('Heartbeat', () => ({ currentTime: currentTime() }));
  client.handle('StatusNotification', () => ({}));
  client.handle('MeterValues', () => ({}));
  client.handle('StartTransaction', () => ({
    transactionId: nextTransactionId++,
    idTagInfo: { status: 'Accepted' },
  }));
  client.handle('TransactionEvent', ({ params }) =>
    params.idToken === undefined ? {} : { idTokenInfo: { status: 'Accepted' } },
  );
});

const http = await server.listen(0, '127.0.0.1');
const address = http.address();
if (address === null || typeof address === 'string') throw new Error('no port');
process.send?.({ port: address.port } satisfies BareReady);
process.on('disconnect', () => process.exit(0));
