import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfigFile, validateConfig } from './cli-options.js';
import type { SimulatorConfig } from './cli-options.js';
import { PERSONALITY_NAMES } from './personalities.js';
import { SimulatorRunner } from './simulator-runner.js';
import type { ChargePointFactory, EventLine } from './simulator-runner.js';

/** What a protocol version's CLI entry point contributes; flags and behaviour are shared. */
export interface SimulatorCli {
  /** Program name in --help, e.g. ocpp16-sim. */
  name: string;
  /** e.g. "OCPP 1.6J". */
  protocolLabel: string;
  /** e.g. "charge points" (1.6) or "charging stations" (2.0.1). */
  chargerNoun: string;
  create: ChargePointFactory;
}

interface CliFlags {
  url?: string;
  id?: string;
  password?: string;
  ca?: string;
  cert?: string;
  key?: string;
  connectors?: number;
  maxPowerW?: number;
  timeFactor?: number;
  profileDelay?: number;
  meterStartWh?: number;
  plug: string[];
  replugAfter?: number;
  unplugWhenFull?: boolean;
  remoteStart?: string;
  vendor?: string;
  model?: string;
  personality?: string;
  file?: string;
  trace?: boolean;
}

// Give a hung close handshake this long before exiting anyway.
const SHUTDOWN_GRACE_MS = 5_000;

function number(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed)) {
    throw new InvalidArgumentError('not a number.');
  }
  return parsed;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** The simulators' command line (both versions share it); the docs test parses documented lines with it. */
export function buildProgram(cli: SimulatorCli): Command {
  return new Command()
    .name(cli.name)
    .description(
      `Simulated ${cli.protocolLabel} ${cli.chargerNoun} (DC chargers with vehicles) for a ` +
        'central system.\nPrints one JSON line per notable event on stdout; warnings go to stderr.',
    )
    .option('--url <url>', 'central system endpoint without the identity (ws://host:port/ocpp)')
    .option('--id <identity>', 'charge point identity')
    .option('--password <password>', 'OCPP basic auth password (security profiles 1 and 2)')
    .option('--ca <file>', "PEM file: CA of the central system's certificate (wss://)")
    .option('--cert <file>', 'PEM file: client certificate, CN = charge point id (profile 3)')
    .option('--key <file>', 'PEM file: private key of --cert')
    .option('--connectors <n>', 'number of connectors (1.6) or EVSEs (2.0.1) (default 1)', number)
    .option('--max-power-w <watts>', 'charger power cap per connector (default 50000)', number)
    .option('--time-factor <factor>', 'simulated seconds per wall second (default 1)', number)
    .option(
      '--profile-delay <seconds>',
      'simulated seconds before an accepted charging profile holds the power (default 1)',
      number,
    )
    .option('--meter-start-wh <wh>', 'initial energy register per connector', number)
    .option(
      '--plug <spec>',
      'plug a vehicle at start, repeatable: ' +
        '"1:model=Hyundai Ioniq 5,batteryKwh=77.4,soc=35,maxPowerW=150000"; ' +
        'mac=<EVCCID> identifies it (AutoCharge), card=<UID> taps a card after plugging in',
      collect,
      [],
    )
    .option(
      '--replug-after <seconds>',
      'wall seconds after an unplug or a finished transaction to plug the same vehicle again ' +
        '(SoC reset)',
      number,
    )
    .option('--unplug-when-full', 'unplug (EVDisconnected) when the vehicle reaches 100 %')
    .addOption(
      new Option('--remote-start <policy>', 'answer to remote start requests').choices([
        'accept',
        'reject',
        'ignore',
      ]),
    )
    .option('--vendor <vendor>', 'vendor in the BootNotification')
    .option('--model <model>', 'model in the BootNotification')
    .option(
      '--personality <list>',
      'firmware personalities, comma-separated (e.g. numeric-values,clock-skew=-5); ' +
        `known: ${PERSONALITY_NAMES.join(', ')}`,
    )
    .option(
      '--file <path>',
      'YAML/JSON list of chargers with the same keys in camelCase ' +
        '(id, url, connectors, maxPowerW, plug, replugAfter, ...); other flags act as defaults',
    )
    .option('--trace', 'also print every OCPP frame to stderr')
    .showHelpAfterError('(run with --help for usage)');
}

// Only flags the user gave, so that they act as defaults for --file entries.
function flagsToConfig(flags: CliFlags): Record<string, unknown> {
  const config: Record<string, unknown> = {
    url: flags.url,
    id: flags.id,
    password: flags.password,
    ca: flags.ca,
    cert: flags.cert,
    key: flags.key,
    connectors: flags.connectors,
    maxPowerW: flags.maxPowerW,
    timeFactor: flags.timeFactor,
    profileDelaySeconds: flags.profileDelay,
    meterStartWh: flags.meterStartWh,
    replugAfter: flags.replugAfter,
    unplugWhenFull: flags.unplugWhenFull,
    remoteStart: flags.remoteStart,
    vendor: flags.vendor,
    model: flags.model,
    personality: flags.personality,
    plug: flags.plug.length > 0 ? flags.plug : undefined,
  };
  return Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
}

async function loadConfigs(flags: CliFlags): Promise<SimulatorConfig[]> {
  const fromFlags = flagsToConfig(flags);
  if (flags.file === undefined) return [validateConfig(fromFlags, undefined)];
  if (flags.id !== undefined) throw new ConfigError('--id cannot be combined with --file');
  const configs = await loadConfigFile(flags.file, fromFlags);
  const ids = configs.map((config) => config.id);
  const duplicate = ids.find((id, index) => ids.indexOf(id) !== index);
  if (duplicate !== undefined) throw new ConfigError(`${flags.file}: duplicate id "${duplicate}"`);
  return configs;
}

function printLine(stream: NodeJS.WriteStream, line: EventLine): void {
  stream.write(`${JSON.stringify(line)}\n`);
}

async function main(cli: SimulatorCli): Promise<void> {
  const program = buildProgram(cli);
  program.parse();
  const flags = program.opts<CliFlags>();

  let configs: SimulatorConfig[];
  try {
    configs = await loadConfigs(flags);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`error: ${error.message}`);
    process.exitCode = 2;
    return;
  }

  const output = {
    event: (line: EventLine) => printLine(process.stdout, line),
    problem: (line: EventLine) => printLine(process.stderr, line),
  };
  let runners: SimulatorRunner[];
  try {
    runners = configs.map((config) => new SimulatorRunner(config, output, cli.create, flags.trace));
  } catch (error) {
    // Options the schema cannot judge alone, e.g. a personality of the other protocol version.
    if (!(error instanceof RangeError)) throw error;
    console.error(`error: ${error.message}`);
    process.exitCode = 2;
    return;
  }

  let shuttingDown = false;
  // `on`, not `once`: timeout(1) and terminals signal the whole group, so a second signal can
  // arrive mid-shutdown and would otherwise kill the process with the default handler.
  const shutdown = (signal: NodeJS.Signals): void => {
    if (shuttingDown) return;
    shuttingDown = true;
    output.event({ time: new Date().toISOString(), event: 'shutdown', signal });
    setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
    void Promise.allSettled(runners.map((runner) => runner.stop())).then(() => {
      process.exitCode = 0;
    });
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);

  await Promise.all(runners.map((runner) => runner.start()));
}

/** Parses the command line, runs the chargers until SIGINT/SIGTERM, sets the exit code. */
export function runSimulatorCli(cli: SimulatorCli): void {
  main(cli).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
