import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { formatTable, OperatorClient, type Query } from './client.js';

/**
 * Commands that talk to a running gateway through the operator API. Every one takes --url,
 * --credential-file and --json (see client.ts for the environment variables). charger-ops adds
 * its `charger …` actions the same way: remote(parent, name, description).action(withClient(…)).
 */
export interface RemoteOptions {
  url?: string;
  credentialFile?: string;
  json?: boolean;
}

export function remote(parent: Command, name: string, description: string): Command {
  return parent
    .command(name)
    .description(description)
    .option(
      '--url <url>',
      'operator API base URL (default $FLEET_GATEWAY_OPERATOR_URL or http://127.0.0.1:8080)',
    )
    .option('--credential-file <file>', 'file holding the operator credential')
    .option('--json', 'print the API answer as JSON');
}

/** Runs `run` with a client; prints JSON with --json, else what `table` makes of the answer. */
export function withClient<O extends RemoteOptions, A extends unknown[]>(
  run: (client: OperatorClient, opts: O, ...args: A) => Promise<unknown>,
  table: (answer: never) => string,
) {
  return async (...all: unknown[]): Promise<void> => {
    // commander passes the positional arguments, then the options, then the command.
    const opts = all[all.length - 2] as O;
    const args = all.slice(0, -2) as A;
    const client = OperatorClient.from({ url: opts.url, credentialFile: opts.credentialFile });
    const answer = await run(client, opts, ...args);
    console.log(opts.json ? JSON.stringify(answer, null, 2) : table(answer as never));
  };
}

const rowsOf = (key: string, columns: string[]) => (answer: Record<string, unknown>) =>
  formatTable((answer[key] as Record<string, unknown>[]) ?? [], columns);
const keyValues = (answer: Record<string, unknown>) =>
  Object.entries(answer)
    .map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join('\n');

/** A whole number of NGN from the command line (refused otherwise, before any request). */
function amountArg(text: string, allowNegative: boolean): number {
  const n = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(n) || n === 0 || (!allowNegative && n < 0)) {
    throw new Error(
      `amount must be a whole number of NGN${allowNegative ? ' other than 0' : ' above 0'}`,
    );
  }
  return n;
}

export function registerOperatorCommands(program: Command): void {
  remote(program, 'status', 'the running gateway at a glance').action(
    withClient((c) => c.get('/status'), keyValues),
  );

  remote(program, 'sessions', 'list sessions, newest first')
    .option('--state <states>', 'comma-separated states (charging,settled,…)')
    .option('--charger <id>')
    .option('--driver <id>')
    .option('--fleet <id>')
    .option('--from <iso>', 'created at or after')
    .option('--to <iso>', 'created before')
    .option('--limit <n>', 'at most this many (1-500)', '50')
    .option('--cursor <cursor>', 'nextCursor of the previous page')
    .action(
      withClient(
        (
          c,
          o: RemoteOptions & {
            state?: string;
            charger?: string;
            driver?: string;
            fleet?: string;
            from?: string;
            to?: string;
            limit: string;
            cursor?: string;
          },
        ) => {
          const q: Query = {
            state: o.state,
            chargerId: o.charger,
            driverId: o.driver,
            fleetId: o.fleet,
            from: o.from,
            to: o.to,
            limit: o.limit,
            cursor: o.cursor,
          };
          return c.get('/sessions', q);
        },
        (a: { items: Record<string, unknown>[]; nextCursor: string | null }) =>
          formatTable(a.items, [
            'sessionId',
            'state',
            'chargerId',
            'connectorId',
            'driverId',
            'amount',
            'energyWh',
            'cost',
            'credited',
            'createdAt',
          ]) + (a.nextCursor ? `\nmore: --cursor ${a.nextCursor}` : ''),
      ),
    );

  remote(program, 'session', "a session's whole story")
    .argument('<sessionId>')
    .action(
      withClient(
        (c, _o, id: string) => c.get(`/sessions/${encodeURIComponent(id)}`),
        (a: { session: Record<string, unknown>; timeline: { at: string; event: string }[] }) =>
          `${keyValues(a.session)}\n\n${formatTable(a.timeline, ['at', 'event'])}`,
      ),
    );

  const wallet = program
    .command('wallet')
    .description("a driver's wallet (through the operator API)");
  for (const [name, path, negative, help] of [
    ['top-up', 'top-ups', false, 'add money to a driver’s wallet'],
    ['adjust', 'adjustments', true, 'correct a driver’s wallet up or down (never below zero)'],
  ] as const) {
    remote(wallet, name, help)
      .argument('<driverId>')
      .argument('<amount>', 'whole NGN')
      .option('--reason <text>', 'why (kept with the ledger entry; required to adjust)')
      .option('--request-id <id>', 'idempotency key (default: a new one; reuse it to retry safely)')
      .action(
        withClient(
          (
            c,
            o: RemoteOptions & { reason?: string; requestId?: string },
            driverId: string,
            amount: string,
          ) => {
            if (negative && !o.reason) throw new Error('--reason is required for an adjustment');
            const body = {
              amount: amountArg(amount, negative),
              ...(typeof o.reason === 'string' ? { reason: o.reason } : {}),
            };
            return c.send(
              'POST',
              `/drivers/${encodeURIComponent(driverId)}/${path}`,
              body,
              o.requestId ?? randomUUID(),
            );
          },
          keyValues,
        ),
      );
  }

  const drivers = program
    .command('drivers')
    .description('fleet drivers (through the operator API)');
  remote(drivers, 'list', 'drivers and their balances')
    .option('--fleet <id>')
    .action(
      withClient(
        (c, o: RemoteOptions & { fleet?: string }) => c.get('/drivers', { fleetId: o.fleet }),
        rowsOf('drivers', [
          'driverId',
          'fleetId',
          'email',
          'active',
          'balance',
          'vehicleModel',
          'openSessionId',
        ]),
      ),
    );
  remote(drivers, 'set', 'add a driver or change one')
    .argument('<driverId>')
    .requiredOption('--fleet <id>')
    .requiredOption('--email <email>')
    .option('--inactive', 'the driver may not charge')
    .option('--vehicle <model>', 'vehicle model (with --battery-kwh)')
    .option('--battery-kwh <kwh>')
    .action(
      withClient(
        (
          c,
          o: RemoteOptions & {
            fleet: string;
            email: string;
            inactive?: boolean;
            vehicle?: string;
            batteryKwh?: string;
          },
          driverId: string,
        ) => {
          if ((o.vehicle === undefined) !== (o.batteryKwh === undefined))
            throw new Error('--vehicle and --battery-kwh go together');
          return c.send('PUT', `/drivers/${encodeURIComponent(driverId)}`, {
            fleetId: o.fleet,
            email: o.email,
            ...(o.inactive ? { active: false } : {}),
            ...(o.vehicle
              ? { vehicle: { model: o.vehicle, batteryKwh: Number(o.batteryKwh) } }
              : {}),
          });
        },
        keyValues,
      ),
    );
  remote(drivers, 'deactivate', 'stop a driver from charging (the wallet stays)')
    .argument('<driverId>')
    .action(
      withClient(
        (c, _o, driverId: string) =>
          c.send('POST', `/drivers/${encodeURIComponent(driverId)}/deactivate`),
        keyValues,
      ),
    );

  const chargers = program
    .command('chargers')
    .description('the site’s chargers (through the operator API)');
  remote(chargers, 'list', 'chargers, connection, firmware and connectors').action(
    withClient(
      (c) => c.get('/chargers'),
      (a: { chargers: Record<string, unknown>[] }) =>
        formatTable(
          a.chargers.map((ch) => ({
            ...ch,
            connectors: (ch.connectors as { connectorId: string; status: string }[])
              .map((k) => `${k.connectorId}:${k.status}`)
              .join(' '),
            deviations: (ch.deviations as { count: number }).count,
          })),
          [
            'chargerId',
            'connected',
            'protocol',
            'vendor',
            'model',
            'firmwareVersion',
            'lastSeenAt',
            'deviations',
            'connectors',
          ],
        ),
    ),
  );
  remote(chargers, 'show', 'one charger and its connectors')
    .argument('<chargerId>')
    .action(
      withClient(
        (c, _o, id: string) => c.get(`/chargers/${encodeURIComponent(id)}`),
        (a: Record<string, unknown> & { connectors: Record<string, unknown>[] }) => {
          const { connectors, ...rest } = a;
          delete rest.recentEvents;
          return `${keyValues(rest)}\n\n${formatTable(
            connectors.map((k) => ({
              ...k,
              session: (k.session as { sessionId?: string } | null)?.sessionId,
            })),
            ['connectorId', 'status', 'errorCode', 'socPercent', 'powerW', 'energyWh', 'session'],
          )}`;
        },
      ),
    );
}
