import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { spawnGateway, type GatewayProcess } from '../../helpers/gateway-process.js';
import { startGatewayChild, type BenchSite } from '../lib/gateway-child.js';
import { compared, comparedRounds, type BenchSection, type Figure } from '../lib/results.js';
import { msSince, percentile } from '../lib/stats.js';
import { growLedger } from './ledger-size.js';
import { openSessions } from './open-sessions.js';

const FULL_OPEN_SESSIONS = 1_000;
const FULL_ROUNDS = 7;

/** Issue 7 part 6: time from process start to ready with 1,000 open sessions; file size per 100k entries. */
export const startupSection: BenchSection = {
  key: 'startup',
  title: 'Start-up, recovery and database size',
  async run(ctx) {
    // A smoke run (BENCH_SCALE < 1, CI) keeps every step and check with fewer sessions and starts.
    const OPEN_SESSIONS =
      ctx.scale >= 1 ? FULL_OPEN_SESSIONS : Math.max(100, 2 * Math.round(500 * ctx.scale));
    const ROUNDS = ctx.rounds(FULL_ROUNDS);
    const stations = OPEN_SESSIONS / 2;
    const site: BenchSite = {
      chargers: Array.from({ length: stations }, (_, i) => `CP-${String(i).padStart(4, '0')}`),
      connectors: 2,
      drivers: 20,
      balance: 200_000,
    };
    // 1. The sessions opened through HTTP and OCPP, then the power is cut (SIGKILL).
    const fullDir = ctx.tempDir();
    const gw = await startGatewayChild(fullDir, site);
    const seededBytes = dbBytes(gw.dbPath);
    const t0 = process.hrtime.bigint();
    const opened = await openSessions(gw.url, gw.ocppUrl, site.chargers, site.drivers, 2_000);
    ctx.log(`${opened.sessionIds.length} sessions opened in ${Math.round(msSince(t0))} ms`);
    await gw.kill();
    await Promise.all(opened.stations.map((s) => s.close()));
    const charging = countOpen(gw.dbPath, OPEN_SESSIONS);
    if (charging !== OPEN_SESSIONS)
      throw new Error(`expected ${OPEN_SESSIONS} open sessions, found ${charging}`);
    const perSessionBytes = (dbBytes(gw.dbPath) - seededBytes) / OPEN_SESSIONS;

    // 2. The same site with no sessions, for the ratio.
    const emptyDir = ctx.tempDir();
    const empty = await startGatewayChild(emptyDir, site);
    await empty.kill();

    // 3. Cold starts, interleaved so that machine noise falls on all three alike.
    const bareScript = fileURLToPath(new URL('./bare-server.js', import.meta.url));
    const times = { full: [] as number[], empty: [] as number[], bare: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      times.full.push(await timeStart(() => spawnGateway(`${fullDir}/gateway.yaml`)));
      times.empty.push(await timeStart(() => spawnGateway(`${emptyDir}/gateway.yaml`)));
      times.bare.push(
        await timeStart(() => spawnBare(bareScript, gw.dbPath, `${emptyDir}/gateway.yaml`)),
      );
    }
    const after = countOpen(gw.dbPath, OPEN_SESSIONS);
    if (after !== OPEN_SESSIONS)
      throw new Error(`start-up changed the open sessions: ${after} of ${OPEN_SESSIONS} left`);

    // 4. Growth per 100,000 ledger entries.
    const size = growLedger(
      ctx.tempDir(),
      Math.max(10_000, Math.round(100_000 * Math.min(1, ctx.scale))),
    );
    const ledgerBytes = size.byObject
      .filter(
        (o) => o.name === 'ledger_entries' || o.name.startsWith('sqlite_autoindex_ledger_entries'),
      )
      .reduce((a, o) => a + o.bytes, 0);
    // Sent outbox rows are deleted after uplink.outbox.sentRetentionHours, and SQLite reuses their
    // pages: with the uplink publishing, the outbox holds only the last week, not the whole history.
    const outboxBytes = size.byObject
      .filter((o) => o.name === 'outbox' || o.name.includes('outbox'))
      .reduce((a, o) => a + o.bytes, 0);
    const per100k = (bytes: number) => (bytes / size.entries) * 100_000;
    const mb = (bytes: number) => bytes / 1e6;

    const figures: Figure[] = [
      comparedRounds(
        `ready with ${OPEN_SESSIONS.toLocaleString('en-US')} open sessions`,
        'ms',
        times.full,
        { label: 'same gateway, no sessions', rounds: times.empty },
      ),
      comparedRounds(
        'ready with no sessions',
        'ms',
        times.empty,
        {
          label: 'bare fastify + better-sqlite3 + ocpp-rpc reading the same config',
          rounds: times.bare,
        },
        { ratio: 1.5, direction: 'at most' },
      ),
      compared(
        'SQLite file per 100,000 ledger entries, uplink publishing',
        'MB',
        mb(per100k(size.fileBytes - outboxBytes)),
        { label: 'the ledger table and its indexes alone', value: mb(per100k(ledgerBytes)) },
      ),
      {
        name: 'SQLite file per 100,000 ledger entries, uplink down (every outbox row kept)',
        unit: 'MB',
        gateway: mb(per100k(size.fileBytes)),
      },
      {
        name: 'SQLite growth per session opened through HTTP + OCPP',
        unit: 'KB',
        gateway: perSessionBytes / 1000,
      },
    ];
    const top = size.byObject
      .slice(0, 5)
      .map((o) => `${o.name} ${mb(per100k(o.bytes)).toFixed(1)} MB`)
      .join(', ');
    return {
      figures,
      notes: [
        `Ready = from spawning \`node dist/cli.js serve\` to its 'gateway listening' log line (recovery of open sessions runs before it); ` +
          `the bare reference reads the config file the gateway without sessions starts with (${stations} chargers) and validates it ` +
          `with the gateway's own YAML reader and zod schema module (src/config/read-yaml.ts, src/config/schema.ts: they import ` +
          `zod, js-yaml and a few constants, nothing else of the gateway), loads the same libraries, opens the same database ` +
          `with the same pragmas and listens. ` +
          `p99 of the ${ROUNDS} starts with open sessions: ${Math.round(percentile(times.full, 99))} ms.`,
        `The ${OPEN_SESSIONS} open sessions were opened through HTTP Start and ${stations} raw stations (half 1.6J, half 2.0.1), then the gateway was SIGKILLed; all ${OPEN_SESSIONS} were still open after every start.`,
        `Size: ${size.entries.toLocaleString('en-US')} ledger entries (${size.sessions.toLocaleString('en-US')} debited and settled sessions plus top-ups) written by the gateway's own store classes; file after a WAL checkpoint, no VACUUM. ` +
          `Largest objects per 100k entries: ${top}. With the uplink publishing, sent outbox rows are deleted after \`uplink.outbox.sentRetentionHours\` (168 by default) and their pages reused, so the first figure leaves the outbox out; with the uplink down nothing is sent and every row is kept.`,
      ],
    };
  },
};

function dbBytes(path: string): number {
  const db = new Database(path);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return statSync(path).size;
}

function countOpen(path: string, expected: number): number {
  const db = new Database(path, { readonly: true });
  const rows = db.prepare('SELECT state, count(*) AS n FROM sessions GROUP BY state').all() as {
    state: string;
    n: number;
  }[];
  db.close();
  const charging = rows.find((r) => r.state === 'charging')?.n ?? 0;
  if (charging !== expected) console.error('sessions by state:', rows);
  return charging;
}

async function timeStart(start: () => Promise<GatewayProcess>): Promise<number> {
  const t0 = process.hrtime.bigint();
  const proc = await start();
  const ms = msSince(t0);
  await proc.kill();
  return ms;
}

/** The bare reference, timed like spawnGateway: spawn to the 'gateway listening' line. */
async function spawnBare(
  script: string,
  dbPath: string,
  configPath: string,
): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [script, dbPath, configPath], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (chunk.includes('gateway listening')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  return {
    child,
    url: '',
    ocppUrl: '',
    lines: [],
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
