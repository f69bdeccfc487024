import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import ocppRpc from 'ocpp-rpc';
import { readYaml } from '../../../src/config/read-yaml.js';
import { configSchema } from '../../../src/config/schema.js';

/**
 * The start-up reference: the gateway's own libraries and nothing else. Reads the gateway's config
 * file and validates it (the gateway's own YAML reader, src/config/read-yaml.ts, and its zod
 * schema module, src/config/schema.ts, which import zod, js-yaml and a few constants and nothing
 * else of the gateway); loads fastify, better-sqlite3 and ocpp-rpc, opens the database with the
 * gateway's pragmas, serves one route and the OCPP upgrade, and prints the same 'gateway
 * listening' line, so the bench times it the same way.
 */
const [dbPath, configPath] = process.argv.slice(2);
if (!dbPath || !configPath) throw new Error('usage: bare-server.js DB_PATH CONFIG_PATH');
const config = configSchema.safeParse(readYaml(readFileSync(configPath, 'utf8')));
if (!config.success) throw new Error(`config ${configPath}: ${config.error.issues[0]?.message}`);
const db = new Database(dbPath);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
const open = db.prepare('SELECT count(*) AS n FROM sessions').get() as { n: number };

const rpc = new ocppRpc.RPCServer({ protocols: ['ocpp1.6', 'ocpp2.0.1'], strictMode: true });
const app = Fastify();
app.get('/health', async () => ({ sessions: open.n, chargers: config.data.chargers.length }));
app.server.on('upgrade', (request, socket, head) => {
  void rpc.handleUpgrade(request, socket as Parameters<typeof rpc.handleUpgrade>[1], head);
});
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
console.log(JSON.stringify({ level: 30, port, msg: 'gateway listening' }));
process.on('SIGTERM', () => {
  void app.close().then(() => {
    db.close();
    process.exit(0);
  });
});
