import { bareRpcServer } from '../lib/bare-rpc-server.js';
import { registerOf, sampleWrites } from './bare-writes.js';
import type { BareReady } from './protocol.js';

/**
 * The references for the OCPP benches (a forked child): a bare ocpp-rpc server with the gateway's
 * RPCServer options (both subprotocols, strictMode, the same frame limit) answering every message
 * the bench chargers send with a constant. No auth. Without an argument no database: the ceiling
 * of the library. With a database path (`bare-server.js DB`): the same server writing each meter
 * sample as the gateway does before answering it (bare-writes.ts), so that what the gateway adds
 * beyond the sample's own write can be told.
 */
const dbPath = process.argv[2];
const writes = dbPath ? sampleWrites(dbPath) : undefined;

const server = bareRpcServer();

const currentTime = () => new Date().toISOString();
let nextTransactionId = 1;

interface Client {
  identity: string;
  protocol: string | undefined;
  handle(
    method: string,
    handler: (call: { params: Record<string, unknown> }) => unknown | Promise<unknown>,
  ): void;
}

interface Event201 {
  eventType: string;
  idToken?: unknown;
  transactionInfo: { transactionId: string };
  evse?: { id: number };
  meterValue?: unknown;
}

server.on('client', (client: Client) => {
  const id = client.identity;
  client.handle('BootNotification', () => ({
    status: 'Accepted',
    currentTime: currentTime(),
    interval: 300,
  }));
  client.handle('Heartbeat', () => ({ currentTime: currentTime() }));
  client.handle('StatusNotification', () => ({}));
  client.handle('MeterValues', async ({ params }) => {
    if (writes && params.transactionId !== undefined)
      await writes.sample(id, String(params.transactionId), registerOf(params.meterValue));
    return {};
  });
  client.handle('StartTransaction', async ({ params }) => {
    const transactionId = nextTransactionId++;
    if (writes)
      await writes.started(
        id,
        String(params.connectorId),
        String(transactionId),
        Number(params.meterStart),
      );
    return { transactionId, idTagInfo: { status: 'Accepted' } };
  });
  client.handle('TransactionEvent', async ({ params }) => {
    const e = params as unknown as Event201;
    const ref = e.transactionInfo.transactionId;
    if (writes && e.eventType === 'Started')
      await writes.started(id, String(e.evse?.id ?? 1), ref, registerOf(e.meterValue));
    else if (writes && e.eventType === 'Updated' && e.meterValue !== undefined)
      await writes.sample(id, ref, registerOf(e.meterValue));
    return e.idToken === undefined ? {} : { idTokenInfo: { status: 'Accepted' } };
  });
});

const http = await server.listen(0, '127.0.0.1');
const address = http.address();
if (address === null || typeof address === 'string') throw new Error('no port');
process.send?.({ port: address.port } satisfies BareReady);
process.on('disconnect', () => process.exit(0));
