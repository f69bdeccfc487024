import { bareRpcServer } from '../lib/bare-rpc-server.js';
import { openBareDatabase } from '../lib/bare-database.js';
import { BareGroupCommit } from '../lib/bare-group-commit.js';
import { prepareDebit, prepareSettlement } from '../lib/bare-money.js';
import { seedBenchFleet } from '../lib/seed.js';
import { serveParent } from './children.js';
import type { BareLifeReady, BareLifeRequest, BareLifeResult } from './messages.js';

/**
 * The reference for the CPU of a Start's whole life: the bare parts doing the same durable work,
 * in their own process. Per Start: the debit transaction (../lib/bare-money.ts), committed durably
 * before the remote start goes out (strict: synchronous=FULL, the WAL fsynced, as the gateway's
 * Start commits it); one remote-start round trip on a bare ocpp-rpc server with the gateway's
 * options to a bare charger answering Accepted (1.6J RemoteStartTransaction or 2.0.1
 * RequestStartTransaction, the chargers taken in turn); then the settlement transaction with its
 * credit, durable before it is done (strict, as the gateway commits a stop's settlement). Both
 * go through a group commit like the gateway's (../lib/bare-group-commit.ts), so Starts in flight
 * at once share a commit as there. The settlement's transaction first marks the session charging
 * (the transaction's start, which the gateway commits on its own): the settlement's statement
 * settles only a charging session.
 */

interface ServerClient {
  identity: string;
  protocol: string | undefined;
  call(method: string, params: unknown): Promise<unknown>;
}

const clients: ServerClient[] = [];
let life: ((seconds: number, concurrency: number) => Promise<BareLifeResult>) | undefined;

async function setup(
  req: Extract<BareLifeRequest, { setup: unknown }>['setup'],
): Promise<BareLifeReady> {
  const db = openBareDatabase(req.dbPath);
  const drivers = seedBenchFleet(db, req.drivers, 100_000_000);
  const debit = prepareDebit(db, req.amount);
  const settlement = prepareSettlement(db);
  const charging = db.prepare(
    `UPDATE sessions SET state = 'charging', transaction_ref = ?, meter_start_wh = 1000,
       last_meter_wh = 1500, started_at = ? WHERE id = ? AND state = 'authorizing'`,
  );
  const commits = new BareGroupCommit(db);
  const server = bareRpcServer();
  server.on('client', (client: ServerClient) => {
    clients.push(client);
    clients.sort((a, b) => a.identity.localeCompare(b.identity));
  });
  const http = await server.listen(0, '127.0.0.1');
  const address = http.address();
  if (address === null || typeof address === 'string') throw new Error('no port');

  let made = 0;
  const remoteStart = async (n: number, idToken: string) => {
    const client = clients[n % clients.length];
    if (!client) throw new Error('no bare charger connected');
    const reply = (await (client.protocol === 'ocpp1.6'
      ? client.call('RemoteStartTransaction', { connectorId: 1, idTag: idToken })
      : client.call('RequestStartTransaction', {
          idToken: { idToken, type: 'Central' },
          remoteStartId: n + 1,
          evseId: 1,
        }))) as { status?: string };
    if (reply.status !== 'Accepted')
      throw new Error(`${client.identity} answered the remote start ${JSON.stringify(reply)}`);
  };
  life = async (seconds, concurrency) => {
    const from = performance.now();
    const until = from + seconds * 1000;
    let lives = 0;
    const worker = async () => {
      while (performance.now() < until) {
        const n = made++;
        // A connector per Start, as the raw debit: the one-open-session index must not refuse.
        const driver = drivers[n % drivers.length] as string;
        const { sessionId, idToken } = await commits.write('strict', () =>
          debit(driver, String(n)),
        );
        await remoteStart(n, idToken);
        await commits.write('strict', () => {
          charging.run(String(n), new Date().toISOString(), sessionId);
          settlement(sessionId);
        });
        lives += 1;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return { lives, perSecond: lives / ((performance.now() - from) / 1000) };
  };
  return { ocppUrl: `ws://127.0.0.1:${address.port}/ocpp` };
}

serveParent<BareLifeRequest, BareLifeReady | BareLifeResult>(async (m) => {
  if ('setup' in m) return setup(m.setup);
  if (!life) throw new Error('bare Start life: run before setup');
  return life(m.run.seconds, m.run.concurrency);
});
