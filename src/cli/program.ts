import { Command, Option } from 'commander';
import { readFileSync, writeFileSync } from 'node:fs';
import { flushCompileCache } from 'node:module';
import { backupDatabase, restoreBackup } from './offline/backup.js';
import { transferDirectory } from '../transfers/directory.js';
import { applySeed, readSeedFile } from './offline/seed.js';
import { healthUrl, probeHealth } from './remote/health-probe.js';
import { formatLedgerReport, verifyLedger } from './offline/verify-ledger.js';
import { ApiKeys, type ApiKeyInfo } from '../auth/api-keys.js';
import {
  OPERATOR_ROLES,
  OperatorCredentials,
  type OperatorRole,
} from '../auth/operator-credentials.js';
import { generateChargerKey, hashPassword } from '../ocpp/connection/charger-password.js';
import { readConfigFile } from '../config/read-config.js';
import { registerAlertCommands } from './remote/alert-commands.js';
import { registerOperatorCommands } from './remote/operator-commands.js';
import { registerChargerCommands } from './remote/charger-commands.js';
import { registerPowerLimitCommands } from './remote/power-limit-commands.js';
import { registerTariffCommands } from './remote/tariff-commands.js';
import { registerTokenCommands } from './remote/token-commands.js';
import { registerTransferCommands } from './remote/transfer-commands.js';
import { packageVersion } from '../shared/package-version.js';
import { openDatabase } from '../store/database.js';

/** An empty FLEET_GATEWAY_CONFIG is as good as none: say so instead of failing to read "". */
function loadConfig(path: string): ReturnType<typeof readConfigFile> {
  if (path.trim() === '') throw new Error('missing --config <file> (or FLEET_GATEWAY_CONFIG)');
  return readConfigFile(path);
}

/** Commands that work on an existing database never create one on a mistyped path. */
function openExisting(path: string): ReturnType<typeof openDatabase> {
  return openDatabase(path, { mustExist: true });
}

function configOption(): Option {
  return new Option('-c, --config <file>', 'gateway config file (YAML)')
    .env('FLEET_GATEWAY_CONFIG')
    .makeOptionMandatory();
}

/** The fleet's key named by a key id (a hash prefix from `api-key list`); exactly one. */
function keyById(keys: ApiKeys, fleetId: string, keyId: string): ApiKeyInfo {
  const key = keys.byId(fleetId, keyId);
  if (!key)
    throw new Error(`fleet ${fleetId} has no single key with id ${keyId} (see api-key list)`);
  return key;
}

/**
 * The `fleet-gateway` command line, built fresh on each call: src/cli.ts runs it, and the docs test
 * parses every command the docs show against it (with its actions replaced) so a renamed command
 * or option fails there.
 */
export function buildProgram(): Command {
  // The gateway, the demo and the OpenAPI generator are imported by the commands that run them:
  // loading the gateway's modules took 0.9 s of every command's 1.1 s start (an operator's
  // `wallet top-up` included).
  const program = new Command()
    .name('fleet-gateway')
    .description(
      'Fleet charging gateway: OCPP central system, fleet charging session API, prepaid driver sub-wallets.',
    )
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    .showHelpAfterError();

  program
    .command('serve')
    .description('run the gateway: HTTP API and OCPP central system on one port')
    .addOption(configOption())
    .action(async (opts: { config: string }) => {
      const config = loadConfig(opts.config);
      const { startGateway } = await import('../gateway.js');
      const gateway = await startGateway(config);
      // Node writes the compile cache (src/cli.ts) at exit; a gateway is often killed instead.
      flushCompileCache();
      let stopping = false;
      // With shutdown.drainTimeoutSeconds, the first SIGTERM/SIGINT drains (no new Starts, open
      // sessions run to their end or the timeout) and then stops; a second one stops at once.
      const stop = () => {
        if (stopping) return gateway.interruptDrain();
        stopping = true;
        const drained =
          config.shutdown.drainTimeoutSeconds > 0 ? gateway.drain() : Promise.resolve();
        void drained.then(() => gateway.close()).then(() => process.exit(0));
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });

  program
    .command('seed')
    .description(
      'load fleets, API keys, drivers, opening balances and tokens from a JSON file (idempotent)',
    )
    .addOption(configOption())
    .argument('<seed.json>', 'seed file')
    .action((seedPath: string, opts: { config: string }) => {
      const config = loadConfig(opts.config);
      const seed = readSeedFile(seedPath);
      const db = openDatabase(config.database.path);
      try {
        const r = applySeed(db, seed, new Date().toISOString());
        console.log(
          `seeded: ${r.fleets} fleets, ${r.apiKeys} API keys, ${r.drivers} drivers, ` +
            `${r.openingBalances} opening balances, ${r.tokens} tokens created or changed`,
        );
      } finally {
        db.close();
      }
    });

  program
    .command('health')
    .description(
      "ask the running gateway's /healthz (http or https as the config says); exits 1 unless it answers 200",
    )
    .addOption(configOption())
    .option('--timeout <ms>', 'how long to wait for the answer', '4000')
    .action(async (opts: { config: string; timeout: string }) => {
      const url = healthUrl(loadConfig(opts.config));
      const ok = await probeHealth(url, Number(opts.timeout));
      console.log(`${url}: ${ok ? 'ok' : 'not healthy'}`);
      if (!ok) process.exitCode = 1;
    });

  const ledger = program.command('ledger').description('wallet ledger tools');
  ledger
    .command('verify')
    .description('check every wallet invariant; exits 1 on any violation')
    .addOption(configOption())
    .action((opts: { config: string }) => {
      const config = loadConfig(opts.config);
      const db = openExisting(config.database.path);
      try {
        const report = verifyLedger(db);
        console.log(formatLedgerReport(report));
        if (!report.ok) process.exitCode = 1;
      } finally {
        db.close();
      }
    });

  const apiKey = program.command('api-key').description('fleet API keys');
  apiKey
    .command('create')
    .description('create a new API key for a fleet; it is shown once and stored only as a hash')
    .addOption(configOption())
    .requiredOption('--fleet <id>', 'fleet id')
    .option('--label <text>', 'what the key is for', 'cli')
    .action((opts: { config: string; fleet: string; label: string }) => {
      const config = loadConfig(opts.config);
      const db = openExisting(config.database.path);
      try {
        const exists = db.prepare('SELECT 1 FROM fleets WHERE id = ?').get(opts.fleet);
        if (!exists) throw new Error(`no fleet with id ${opts.fleet}`);
        console.log(new ApiKeys(db).create(opts.fleet, opts.label, new Date().toISOString()));
      } finally {
        db.close();
      }
    });

  apiKey
    .command('list')
    .description("list a fleet's keys by id (the start of the key's hash), label and end time")
    .addOption(configOption())
    .requiredOption('--fleet <id>', 'fleet id')
    .action((opts: { config: string; fleet: string }) => {
      const db = openExisting(loadConfig(opts.config).database.path);
      try {
        const now = Date.now();
        for (const k of new ApiKeys(db).list(opts.fleet)) {
          const state =
            k.revokeAt === null
              ? 'active'
              : Date.parse(k.revokeAt) <= now
                ? `revoked ${k.revokeAt}`
                : `active until ${k.revokeAt}`;
          console.log(`${k.keyId}  ${k.createdAt}  ${state}  ${k.label}`);
        }
      } finally {
        db.close();
      }
    });

  apiKey
    .command('rotate')
    .description(
      'create a new key (shown once) and end the old one after an overlap, so that a running ' +
        'gateway accepts both while the fleet backend switches over',
    )
    .addOption(configOption())
    .requiredOption('--fleet <id>', 'fleet id')
    .requiredOption('--replace <keyId>', 'id of the key to retire (from api-key list)')
    .option(
      '--overlap-hours <hours>',
      'how long both keys work (default tokens.apiKeyOverlapHours)',
    )
    .option('--label <text>', 'what the new key is for', 'rotated')
    .action(
      (opts: {
        config: string;
        fleet: string;
        replace: string;
        overlapHours?: string;
        label: string;
      }) => {
        const config = loadConfig(opts.config);
        const hours =
          opts.overlapHours === undefined
            ? config.tokens.apiKeyOverlapHours
            : Number(opts.overlapHours);
        if (!Number.isFinite(hours) || hours < 0 || hours > 8760) {
          throw new Error('--overlap-hours must be a number of hours from 0 to 8760');
        }
        const db = openExisting(config.database.path);
        try {
          const keys = new ApiKeys(db);
          const old = keyById(keys, opts.fleet, opts.replace);
          const now = Date.now();
          const at = new Date(now).toISOString();
          const revokeAtMs = now + Math.round(hours * 3_600_000);
          const key = keys.rotate(opts.fleet, old.keyHash, opts.label, revokeAtMs, at);
          console.log(key);
          console.error(`key ${old.keyId} is accepted until ${new Date(revokeAtMs).toISOString()}`);
        } finally {
          db.close();
        }
      },
    );

  apiKey
    .command('revoke')
    .description('stop accepting a key now (a leaked key); the running gateway refuses it at once')
    .addOption(configOption())
    .requiredOption('--fleet <id>', 'fleet id')
    .argument('<keyId>', 'id of the key (from api-key list)')
    .action((keyId: string, opts: { config: string; fleet: string }) => {
      const db = openExisting(loadConfig(opts.config).database.path);
      try {
        const keys = new ApiKeys(db);
        const key = keyById(keys, opts.fleet, keyId);
        const now = Date.now();
        keys.revokeHash(key.keyHash, now, new Date(now).toISOString());
        console.log(`key ${key.keyId} revoked`);
      } finally {
        db.close();
      }
    });

  const operator = program
    .command('operator')
    .description('operator credentials for the operator API (/admin/v1)');
  operator
    .command('create')
    .description('create an operator; the credential is printed once and stored only as a hash')
    .addOption(configOption())
    .requiredOption('--name <name>', 'who the operator is (unique)')
    .addOption(
      new Option('--role <role>', 'viewer reads, operator also acts')
        .choices(OPERATOR_ROLES)
        .makeOptionMandatory(),
    )
    .action((opts: { config: string; name: string; role: OperatorRole }) => {
      if (!/^[A-Za-z0-9._@-]{1,100}$/.test(opts.name)) {
        throw new Error('--name: 1 to 100 letters, digits and . _ @ -');
      }
      const db = openExisting(loadConfig(opts.config).database.path);
      try {
        const { credential } = new OperatorCredentials(db).create(
          opts.name,
          opts.role,
          new Date().toISOString(),
        );
        console.log(credential);
        console.error(
          `operator ${opts.name} (${opts.role}) created; the credential is not shown again`,
        );
      } finally {
        db.close();
      }
    });
  operator
    .command('list')
    .description('list operators: name, role, created, revoked')
    .addOption(configOption())
    .action((opts: { config: string }) => {
      const db = openExisting(loadConfig(opts.config).database.path);
      try {
        for (const o of new OperatorCredentials(db).list()) {
          const state = o.revokedAt === null ? 'active' : `revoked ${o.revokedAt}`;
          console.log(`${o.name}  ${o.role}  ${o.createdAt}  ${state}`);
        }
      } finally {
        db.close();
      }
    });
  operator
    .command('revoke')
    .description('revoke an operator now; the running gateway refuses its credential at once')
    .addOption(configOption())
    .argument('<name>', 'the operator (from operator list)')
    .action((name: string, opts: { config: string }) => {
      const db = openExisting(loadConfig(opts.config).database.path);
      try {
        if (!new OperatorCredentials(db).revoke(name, new Date().toISOString())) {
          throw new Error(`no active operator named ${name}`);
        }
        console.log(`operator ${name} revoked`);
      } finally {
        db.close();
      }
    });

  registerChargerCommands(program);

  program
    .command('backup')
    .description(
      'write a consistent copy of the database to a new file, and its firmware and logs to ' +
        'FILE.files, also while the gateway runs (put back with restore)',
    )
    .addOption(configOption())
    .argument('<file>', 'the backup file to create (must not exist)')
    .action((file: string, opts: { config: string }) => {
      const config = loadConfig(opts.config);
      const r = backupDatabase(config.database.path, file, transferDirectory(config));
      console.log(
        `backed up ${config.database.path} to ${r.path}: ${r.bytes} bytes, schema version ` +
          `${r.schemaVersion}, ${r.ledgerEntries} ledger entries, ${r.openSessions} open sessions, ` +
          `${filesLine(r.files)}`,
      );
    });

  program
    .command('restore')
    .description(
      'put a backup back: its firmware and logs into transfers.directory, then the database at ' +
        'database.path, which must not exist (stop the gateway and move the old one aside first)',
    )
    .addOption(configOption())
    .argument('<file>', 'the backup file (its files are in FILE.files)')
    .action((file: string, opts: { config: string }) => {
      const config = loadConfig(opts.config);
      const r = restoreBackup(file, config.database.path, transferDirectory(config));
      console.log(
        `restored ${file} to ${r.path}, ${filesLine(r.files)}; run ledger verify before starting`,
      );
    });

  program
    .command('hash-password')
    .description(
      'hash a charger password for the config (reads standard input when no argument is given)',
    )
    .argument('[password]', 'the password (16 to 40 characters)')
    .action((password: string | undefined) => {
      const value = (password ?? readFileSync(0, 'utf8')).replace(/\r?\n$/, '');
      console.log(hashPassword(value)); // refuses a length outside 16..40
    });

  program
    .command('charger-key')
    .description(
      'generate a random charger password (192 bits) and its hash for the config: checked in ' +
        "microseconds, unlike a chosen password's scrypt hash",
    )
    .action(() => {
      const { key, hash } = generateChargerKey();
      console.log(`password (set it on the charger; it is not stored): ${key}`);
      console.log(`passwordHash (for the config): ${hash}`);
    });

  program
    .command('demo')
    .description('run a demo site: gateway, seeded demo fleet and simulated chargers')
    .option('--port <port>', 'HTTP/OCPP port', '8080')
    .option('--time-factor <n>', 'simulated seconds per real second', '30')
    .option(
      '--database <file>',
      'database file instead of the demo config one (.data/demo.db); the demo config for it is written beside it as FILE.yaml',
    )
    .action(async (opts: { port: string; timeFactor: string; database?: string }) => {
      const { runDemo } = await import('../demo/demo.js');
      await runDemo({
        port: Number(opts.port),
        timeFactor: Number(opts.timeFactor),
        ...(opts.database ? { databasePath: opts.database } : {}),
      });
    });

  program
    .command('openapi')
    .description('print (or write) the OpenAPI 3.1 document generated from the routes')
    .option('--out <file>', 'write it to this file')
    .action(async (opts: { out?: string }) => {
      const { generateOpenApi, openApiText } = await import('./offline/openapi.js');
      const text = openApiText(await generateOpenApi());
      if (opts.out) writeFileSync(opts.out, text);
      else process.stdout.write(text);
    });

  registerOperatorCommands(program);
  registerPowerLimitCommands(program);
  registerTariffCommands(program);
  registerTokenCommands(program);
  registerTransferCommands(program);
  registerAlertCommands(program);
  return program;
}

function filesLine(f: { files: number; bytes: number; missing: string[] }): string {
  const missing =
    f.missing.length === 0 ? '' : ` (${f.missing.length} missing: ${f.missing.join(', ')})`;
  return `${f.files} transfer files, ${f.bytes} bytes${missing}`;
}
