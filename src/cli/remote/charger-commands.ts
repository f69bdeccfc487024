import { Argument, Option, type Command } from 'commander';
import type {
  ActionAnswer,
  ConfigurationAnswer,
  SessionStopAnswer,
} from '../../operator/charger-actions.js';
import { formatTable, OperatorClient } from './client.js';

interface ClientOptions {
  url?: string;
  credentialFile?: string;
  json?: boolean;
}

/** --url, --credential-file and --json on every charger command. */
function withClientOptions(command: Command): Command {
  return command
    .option('--url <url>', 'the operator API (default $FLEET_GATEWAY_OPERATOR_URL)')
    .option('--credential-file <file>', 'file holding the operator credential')
    .option('--json', 'print the API’s answer as JSON');
}

const client = (opts: ClientOptions) =>
  OperatorClient.from({ url: opts.url, credentialFile: opts.credentialFile });

/**
 * Prints the charger's answer. A command the charger did not take exits with 2, so a script can
 * tell "refused by the charger" (2) from "not delivered" (1: offline, timeout, not found).
 */
function report(answer: ActionAnswer, opts: ClientOptions, what: string): void {
  if (opts.json) console.log(JSON.stringify(answer, null, 2));
  else {
    const where =
      answer.connectorId === null
        ? answer.chargerId
        : `${answer.chargerId} connector ${answer.connectorId}`;
    console.log(
      `${what} ${where}: ${answer.status} (${answer.accepted ? 'taken' : 'not taken'} by the charger)`,
    );
  }
  if (!answer.accepted) process.exitCode = 2;
}

const path = (...parts: string[]) => parts.map((p) => `/${encodeURIComponent(p)}`).join('');

/** `fleet-gateway charger …`: acting on chargers through the running gateway's operator API. */
export function registerChargerCommands(program: Command): void {
  const charger = program
    .command('charger')
    .description('act on chargers through the operator API (reset, unlock, availability, …)');

  withClientOptions(
    charger
      .command('reset')
      .description('reset a charger: soft waits for running transactions, --hard does not')
      .argument('<chargerId>')
      .option('--hard', 'reboot now, ending running transactions'),
  ).action(async (chargerId: string, opts: ClientOptions & { hard?: boolean }) => {
    const answer = await client(opts).send<ActionAnswer>(
      'POST',
      `${path('chargers', chargerId)}/reset`,
      { type: opts.hard ? 'hard' : 'soft' },
    );
    report(answer, opts, opts.hard ? 'hard reset' : 'soft reset');
  });

  withClientOptions(
    charger
      .command('unlock')
      .description('unlock the cable of a connector')
      .argument('<chargerId>')
      .argument('<connectorId>'),
  ).action(async (chargerId: string, connectorId: string, opts: ClientOptions) => {
    const answer = await client(opts).send<ActionAnswer>(
      'POST',
      `${path('chargers', chargerId, 'connectors', connectorId)}/unlock`,
    );
    report(answer, opts, 'unlock');
  });

  withClientOptions(
    charger
      .command('availability')
      .description(
        'take a connector (or, without one, the whole charger) out of service or back into it',
      )
      .argument('<chargerId>')
      .argument('[connectorId]')
      .addOption(
        new Option('--set <availability>', 'the new availability')
          .choices(['operative', 'inoperative'])
          .makeOptionMandatory(),
      )
      .option('--reason <text>', 'why (shown to drivers’ apps in the Start refusal)'),
  ).action(
    async (
      chargerId: string,
      connectorId: string | undefined,
      opts: ClientOptions & { set: 'operative' | 'inoperative'; reason?: string },
    ) => {
      const target =
        connectorId === undefined
          ? path('chargers', chargerId)
          : path('chargers', chargerId, 'connectors', connectorId);
      const answer = await client(opts).send<ActionAnswer>('POST', `${target}/availability`, {
        operative: opts.set === 'operative',
        ...(opts.reason === undefined ? {} : { reason: opts.reason }),
      });
      report(answer, opts, opts.set);
    },
  );

  withClientOptions(
    charger
      .command('trigger')
      .description('ask a charger to send a status or meter report now')
      .argument('<chargerId>')
      .addArgument(new Argument('<message>', 'what to send').choices(['status', 'meter']))
      .option('--connector <connectorId>', 'only this connector'),
  ).action(
    async (
      chargerId: string,
      message: 'status' | 'meter',
      opts: ClientOptions & { connector?: string },
    ) => {
      const answer = await client(opts).send<ActionAnswer>(
        'POST',
        `${path('chargers', chargerId)}/trigger`,
        { message, ...(opts.connector === undefined ? {} : { connectorId: opts.connector }) },
      );
      report(answer, opts, `trigger ${message}`);
    },
  );

  const config = charger
    .command('config')
    .description('read or change a charger’s configuration (2.0.1: Component.Variable names)');
  withClientOptions(
    config
      .command('get')
      .description('read settings; without names, what the charger reports by default')
      .argument('<chargerId>')
      .argument('[names...]'),
  ).action(async (chargerId: string, names: string[], opts: ClientOptions) => {
    const answer = await client(opts).get<ConfigurationAnswer>(
      `${path('chargers', chargerId)}/config`,
      { keys: names.length > 0 ? names.join(',') : undefined },
    );
    if (opts.json) {
      console.log(JSON.stringify(answer, null, 2));
      return;
    }
    console.log(
      formatTable(
        answer.entries.map((e) => ({ ...e })),
        ['key', 'value', 'readonly'],
      ),
    );
    if (answer.unknownKeys.length > 0) console.log(`unknown: ${answer.unknownKeys.join(', ')}`);
  });
  withClientOptions(
    config
      .command('set')
      .description('change one setting on the site’s allow-list (chargerOperations.writableConfig)')
      .argument('<chargerId>')
      .argument('<name>')
      .argument('<value>'),
  ).action(async (chargerId: string, name: string, value: string, opts: ClientOptions) => {
    const answer = await client(opts).send<ActionAnswer>(
      'PUT',
      `${path('chargers', chargerId)}/config`,
      { name, value },
    );
    report(answer, opts, `set ${name} on`);
  });

  withClientOptions(
    charger
      .command('stop-session')
      .description('stop a charging session; it settles as any other once the charger ends it')
      .argument('<sessionId>'),
  ).action(async (sessionId: string, opts: ClientOptions) => {
    const answer = await client(opts).send<SessionStopAnswer>(
      'POST',
      `${path('sessions', sessionId)}/stop`,
    );
    if (opts.json) console.log(JSON.stringify(answer, null, 2));
    else
      console.log(
        `session ${sessionId}: ${answer.status}${answer.retrying ? ' (the gateway keeps sending the stop)' : ''}`,
      );
  });
}
