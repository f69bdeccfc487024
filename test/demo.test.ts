import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { openDatabase } from '../src/store/database.js';
import { bearer, post } from './helpers/http.js';
import { systemEnv } from './helpers/system-node.js';
import { waitUntil } from './helpers/wait.js';

const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'cli.js');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

interface DemoRun {
  port: number;
  databasePath: string;
  /** What it printed on standard error up to its console logins. */
  printed: string;
}

/**
 * Starts `fleet-gateway demo` on a free port with a database of its own and waits for its
 * instructions; the describe it is called in stops it and removes its folder afterwards.
 */
function demoRunner(env: NodeJS.ProcessEnv = process.env): () => Promise<DemoRun> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-demo-'));
  let demo: ChildProcess | undefined;
  afterAll(async () => {
    if (demo && demo.exitCode === null) {
      const exited = new Promise((resolve) => demo?.once('exit', resolve));
      demo.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return async () => {
    const port = await freePort();
    const databasePath = join(dir, 'demo.db');
    const args = ['--port', String(port), '--time-factor', '60', '--database', databasePath];
    demo = spawn(process.execPath, [CLI, 'demo', ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let printed = '';
    demo.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
    await waitUntil(
      () => printed.includes('Try it in another terminal') && printed.includes('demo logins'),
      15_000,
      'demo instructions',
    );
    return { port, databasePath, printed };
  };
}

describe('the quick-start demo (`fleet-gateway demo`, what `npm start` runs)', () => {
  const startDemo = demoRunner();

  it('runs the gateway with simulated chargers, and the printed API calls work', async () => {
    const { port, databasePath, printed } = await startDemo();

    const apiKey = /ApiKey ([^']+)'/.exec(printed)?.[1];
    const email = /"driverEmail":"([^"]+)"/.exec(printed)?.[1];
    expect(apiKey).toBeDefined();
    const url = `http://127.0.0.1:${port}`;
    expect(printed).toContain(`curl -s -X POST ${url}/v1/driver-tokens`);

    // The console's address and its demo logins, said to be demo logins, work as printed.
    expect(printed).toContain(`Site console: ${url}/console`);
    expect(printed).toMatch(/demo logins/);
    for (const role of ['operator', 'viewer']) {
      const m = new RegExp(`${role} +name (\\S+) +credential (fop_\\S+)`).exec(printed);
      expect(m, role).not.toBeNull();
      const login = await post(url, '/console/session', { name: m?.[1], credential: m?.[2] });
      expect(login.status, role).toBe(200);
      expect(login.body).toMatchObject({ operator: { role } });
    }
    const page = await fetch(`${url}/console`);
    const built = existsSync(join(import.meta.dirname, '..', 'dist', 'console-web', 'index.html'));
    expect(page.status).toBe(built ? 200 : 503);
    if (!built) expect(await page.text()).toContain('console not built: run npm run build');

    const minted = await post(
      url,
      '/v1/driver-tokens',
      { driverEmail: email },
      { authorization: `ApiKey ${apiKey}` },
    );
    expect(minted.status).toBe(200);
    const token = (minted.body as { token: string }).token;
    const body = { chargerId: 'CP-DC-01', connectorId: '1', driverEmail: email };
    // Wait in the database, not by polling the quote: the driver token's rate limit would stop that.
    const stateDb = openDatabase(databasePath);
    try {
      await waitUntil(
        () =>
          stateDb
            .prepare(
              "SELECT 1 FROM connector_state WHERE charger_id = 'CP-DC-01' AND connector_id = '1' AND soc_percent IS NOT NULL",
            )
            .get(),
        15_000,
        'the simulated vehicle SoC',
      );
    } finally {
      stateDb.close();
    }
    const quote = await post(url, '/v1/sessions/quote', body, bearer(token));
    expect(quote.status).toBe(200);
    expect((quote.body as { socSource: string }).socSource).toBe('charger');
    expect(quote.body).toMatchObject({
      fleetDriver: true,
      socPercent: 35,
      vehicleModel: 'Hyundai Ioniq 5',
    });

    const start = await post(url, '/v1/sessions', { ...body, amount: 1000 }, bearer(token));
    expect(start.status).toBe(200);
    const { sessionId } = start.body as { sessionId: string };

    const db = openDatabase(databasePath);
    try {
      const session = await waitUntil(
        () =>
          db
            .prepare("SELECT state, end_reason FROM sessions WHERE id = ? AND state = 'settled'")
            .get(sessionId),
        20_000,
        'the demo session to settle',
      );
      expect(session).toEqual({ state: 'settled', end_reason: 'Remote' });
      expect(verifyLedger(db).ok).toBe(true);
      // One charger of each protocol, side by side.
      expect(
        db.prepare('SELECT charger_id, protocol FROM charger_info ORDER BY charger_id').all(),
      ).toEqual([
        { charger_id: 'CP-AC-02', protocol: 'ocpp1.6' },
        { charger_id: 'CP-DC-01', protocol: 'ocpp2.0.1' },
        { charger_id: 'CP-DC-03', protocol: 'ocpp2.1' },
      ]);
    } finally {
      db.close();
    }
  });
});

/** The shell commands between "Try it in another terminal" and the console's address. */
function printedCommands(printed: string): string[] {
  const block = printed.slice(
    printed.indexOf('Try it in another terminal'),
    printed.indexOf('Site console:'),
  );
  return block
    .split('\n')
    .slice(1)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .join('\n')
    .replaceAll('\\\n', ' ')
    .split('\n');
}

describe('what the demo prints, run as printed from a fresh shell (the system Node first on PATH)', () => {
  const startDemo = demoRunner(systemEnv());

  it('mints, quotes, starts a paid session and verifies the ledger of this run', async () => {
    const { databasePath, printed } = await startDemo();

    const commands = printedCommands(printed);
    expect(commands).toHaveLength(4);
    const [mint = '', quote = '', start = '', verify = ''] = commands;
    expect(mint).toMatch(/^TOKEN=\$\(curl /);
    expect(verify).toMatch(/ ledger verify --config /);

    const db = openDatabase(databasePath);
    try {
      await waitUntil(
        () =>
          db
            .prepare(
              "SELECT 1 FROM connector_state WHERE charger_id = 'CP-DC-01' AND connector_id = '1' AND soc_percent IS NOT NULL",
            )
            .get(),
        15_000,
        'the simulated vehicle SoC',
      );
      // One shell for the three calls: the token the first one sets is the next two's.
      const calls = spawnSync('bash', ['-eo', 'pipefail', '-c', [mint, quote, start].join('\n')], {
        cwd: ROOT,
        env: systemEnv(),
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(calls.status, calls.stderr).toBe(0);
      const [quoted = '', started = ''] = calls.stdout.trim().split('\n');
      expect(JSON.parse(quoted)).toMatchObject({ fleetDriver: true, currency: 'NGN' });
      const { sessionId } = JSON.parse(started) as { sessionId: string };
      expect(sessionId).toMatch(/^ses_/);

      await waitUntil(
        () =>
          db.prepare("SELECT 1 FROM sessions WHERE id = ? AND state = 'settled'").get(sessionId),
        30_000,
        'the printed session to settle',
      );
    } finally {
      db.close();
    }
    const verified = spawnSync('bash', ['-c', verify], {
      cwd: ROOT,
      env: systemEnv(),
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(verified.status, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/ledger/i);
  });
});
