import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseDocument } from 'yaml';
import { z } from 'zod';
import { applySeed, readSeedFile } from '../cli/offline/seed.js';
import { readConfigFile } from '../config/read-config.js';
import { startGateway } from '../gateway.js';
import { demoLogins, type DemoLogin } from './demo-operators.js';
import { openDatabase } from '../store/database.js';
import { shellCommand, typedPath } from '../shared/shell-command.js';

/** The project's root, whether this runs from dist/ or from src/. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const demoChargers = z.array(
  z
    .object({
      id: z.string(),
      /** Which simulator plays this charger; the gateway itself takes whatever the charger speaks. */
      protocol: z.enum(['ocpp1.6', 'ocpp2.0.1', 'ocpp2.1']),
      model: z.string(),
      password: z.string(),
      connectors: z.number().int().positive(),
      maxPowerW: z.number().positive(),
      plug: z.array(
        z
          .object({
            connector: z.number().int().positive(),
            vehicle: z
              .object({
                model: z.string(),
                batteryKwh: z.number().positive(),
                socPercent: z.number().min(0).max(100),
                maxPowerW: z.number().positive(),
              })
              .strict(),
          })
          .strict(),
      ),
    })
    .strict(),
);

export interface DemoOptions {
  port: number;
  timeFactor: number;
  /** Overrides the demo config's database file. */
  databasePath?: string;
}

/**
 * Seeds the demo fleet, starts the gateway on the demo config and runs the simulated chargers as
 * child processes (as real chargers are separate machines), then prints how to call the API.
 */
export async function runDemo(options: DemoOptions): Promise<void> {
  const configPath = options.databasePath
    ? demoConfigFor(resolve(options.databasePath))
    : join(ROOT, 'config', 'demo.yaml');
  const config = readConfigFile(configPath);
  config.http.port = options.port;
  const db = openDatabase(config.database.path);
  const seed = readSeedFile(join(ROOT, 'config', 'demo-seed.json'));
  applySeed(db, seed, new Date().toISOString());
  const logins = demoLogins(db, new Date().toISOString());
  db.close();

  const gateway = await startGateway(config);
  const chargers = demoChargers.parse(
    parse(readFileSync(join(ROOT, 'config', 'demo-chargers.yaml'), 'utf8')),
  );
  const simulatorCli = {
    'ocpp1.6': 'ocpp16',
    'ocpp2.0.1': 'ocpp201',
    'ocpp2.1': 'ocpp21',
  } as const;
  const children: ChildProcess[] = chargers.map((c) =>
    spawn(
      process.execPath,
      [
        join(ROOT, 'dist', 'simulators', simulatorCli[c.protocol], 'cli.js'),
        '--url',
        gateway.ocppUrl,
        '--id',
        c.id,
        '--password',
        c.password,
        '--model',
        c.model,
        '--connectors',
        String(c.connectors),
        '--max-power-w',
        String(c.maxPowerW),
        '--time-factor',
        String(options.timeFactor),
        '--replug-after',
        '10',
        '--unplug-when-full',
        // A driver display: the demo's sessions show what was paid (docs/driver-tokens.md).
        '--personality',
        'cost-screen',
        ...c.plug.flatMap((p) => [
          '--plug',
          `${p.connector}:model=${p.vehicle.model},batteryKwh=${p.vehicle.batteryKwh},soc=${p.vehicle.socPercent},maxPowerW=${p.vehicle.maxPowerW}`,
        ]),
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    ),
  );

  const apiKey = seed.fleets[0]?.apiKeys[0] ?? '';
  const email = seed.fleets[0]?.drivers[0]?.email ?? '';
  // One write: a reader that saw the curl session has the console's address too.
  process.stderr.write(
    demoInstructions(gateway.url, apiKey, email, ledgerVerify(configPath)) +
      consoleInstructions(gateway.operatorUrl, logins),
  );

  const stop = () => {
    for (const child of children) child.kill('SIGTERM');
    void gateway.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function consoleInstructions(
  operatorUrl: string,
  logins: { operator: DemoLogin; viewer: DemoLogin },
): string {
  const line = (l: DemoLogin) => `  ${l.role.padEnd(8)} name ${l.name}  credential ${l.credential}`;
  return `Site console: ${operatorUrl}/console  (log in with a name and its credential)
${line(logins.operator)}
${line(logins.viewer)}
  These are demo logins, made fresh for this run (the previous run's are revoked): never use
  a demo database for a real site. Real operators: fleet-gateway operator create.

`;
}

/**
 * The demo config with another database, written beside it, so that the `ledger verify` the demo
 * prints checks the database this run uses.
 */
function demoConfigFor(databasePath: string): string {
  const doc = parseDocument(readFileSync(join(ROOT, 'config', 'demo.yaml'), 'utf8'));
  doc.setIn(['database', 'path'], databasePath);
  const path = `${databasePath}.yaml`;
  writeFileSync(path, doc.toString());
  return path;
}

/**
 * `ledger verify` as a command that runs where it is pasted: on the checkout's pinned Node (the
 * system's may be one the gateway does not support), with paths from the user's directory (npm
 * start runs this in the project's root, and says where it was started in INIT_CWD).
 */
function ledgerVerify(configPath: string): string {
  const cwd = process.env.INIT_CWD ?? process.cwd();
  const pinned = join(ROOT, 'node_modules/.bin/node');
  const node = existsSync(pinned) ? pinned : process.execPath;
  return shellCommand([
    typedPath(node, cwd),
    typedPath(join(ROOT, 'dist', 'cli.js'), cwd),
    'ledger',
    'verify',
    '--config',
    typedPath(configPath, cwd),
  ]);
}

function demoInstructions(url: string, apiKey: string, email: string, verify: string): string {
  const json = "-H 'Content-Type: application/json'";
  return `
Fleet charging gateway demo is running on ${url} (OCPP chargers connect to ${url.replace('http', 'ws')}/ocpp/<id>).
Simulated chargers: CP-DC-01 (OCPP 2.0.1 DC, Hyundai Ioniq 5 plugged into EVSE 1), CP-AC-02 (OCPP 1.6J AC, BYD Atto 3).
Logs are JSON lines on standard output; Ctrl-C stops everything.

Try it in another terminal:

  # 1. the fleet backend mints a driver token
  TOKEN=$(curl -s -X POST ${url}/v1/driver-tokens ${json} \\
    -H 'Authorization: ApiKey ${apiKey}' \\
    -d '{"driverEmail":"${email}"}' | sed -E 's/.*"token":"([^"]+)".*/\\1/')

  # 2. the driver's app asks for a quote at charger CP-DC-01, connector 1
  curl -s -X POST ${url}/v1/sessions/quote ${json} -H "Authorization: Bearer $TOKEN" \\
    -d '{"chargerId":"CP-DC-01","connectorId":"1","driverEmail":"${email}"}'; echo

  # 3. start a session paying 5000 NGN; the charger stops when that energy is delivered
  curl -s -X POST ${url}/v1/sessions ${json} -H "Authorization: Bearer $TOKEN" \\
    -d '{"chargerId":"CP-DC-01","connectorId":"1","driverEmail":"${email}","amount":5000}'; echo

  # 4. after the session ends, check the books
  ${verify}

`;
}
