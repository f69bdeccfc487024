import type { Command } from 'commander';
import { formatTable } from './client.js';
import { remote, withClient, type RemoteOptions } from './operator-commands.js';

interface WindowAnswer {
  days: string[];
  from: string;
  to: string;
  pricePerKwh: number;
}

interface TariffAnswer {
  id: string;
  version: number;
  pricePerKwh: number;
  windows: WindowAnswer[];
  setBy: string;
  setAt: string;
  now: { pricePerKwh: number; window: string | null; until: string | null };
  connectors: string[];
}

const windowText = (w: WindowAnswer) => `${w.days.join(',')} ${w.from}-${w.to} ${w.pricePerKwh}`;

const tariffText = (t: TariffAnswer) =>
  [
    `${t.id} (version ${t.version}, set by ${t.setBy} at ${t.setAt})`,
    `base: ${t.pricePerKwh} NGN/kWh`,
    ...t.windows.map((w) => `window: ${windowText(w)} NGN/kWh`),
    `now: ${t.now.pricePerKwh} NGN/kWh${t.now.window ? ` (${t.now.window})` : ''}` +
      (t.now.until ? ` until ${t.now.until}` : ''),
    `connectors: ${t.connectors.join(', ') || 'none'}`,
  ].join('\n');

const WINDOW =
  /^((?:sun|mon|tue|wed|thu|fri|sat)(?:,(?:sun|mon|tue|wed|thu|fri|sat))*) (\d\d:\d\d)-(\d\d:\d\d) (\d+(?:\.\d{1,3})?)$/;

/** `mon,tue 18:00-22:00 450` from the command line (refused before any request otherwise). */
function windowArg(text: string, previous: WindowAnswer[] = []): WindowAnswer[] {
  const m = WINDOW.exec(text.trim());
  if (!m) {
    throw new Error(
      `window "${text}": give days, times and NGN/kWh as "mon,tue,wed 18:00-22:00 450"`,
    );
  }
  const [, days = '', from = '', to = '', price = ''] = m;
  return [...previous, { days: days.split(','), from, to, pricePerKwh: Number(price) }];
}

/** NGN per kWh with at most 3 decimals (refused before any request otherwise). */
function priceArg(text: string): number {
  if (!/^\d+(\.\d{1,3})?$/.test(text) || !(Number(text) > 0))
    throw new Error('pricePerKwh must be a number of NGN above 0 with at most 3 decimals');
  return Number(text);
}

/** `fleet-gateway tariffs | tariff show | tariff set | tariff delete` (operator API). */
export function registerTariffCommands(program: Command): void {
  remote(program, 'tariffs', 'every tariff with its price now').action(
    withClient(
      (c) => c.get('/tariffs'),
      (a: { source: string; timeZone: string; tariffs: TariffAnswer[] }) =>
        formatTable(
          a.tariffs.map((t) => ({
            id: t.id,
            version: t.version,
            pricePerKwh: t.pricePerKwh,
            windows: t.windows.length,
            now: t.now.pricePerKwh,
            until: t.now.until ?? '',
            connectors: t.connectors.length,
          })),
          ['id', 'version', 'pricePerKwh', 'windows', 'now', 'until', 'connectors'],
        ) + `\nkept in the ${a.source}; windows in ${a.timeZone}`,
    ),
  );
  const tariff = program.command('tariff').description('one tariff (through the operator API)');
  remote(tariff, 'show', 'a tariff, its windows and the price now')
    .argument('<tariffId>')
    .action(
      withClient((c, _o, id: string) => c.get(`/tariffs/${encodeURIComponent(id)}`), tariffText),
    );
  remote(tariff, 'set', 'create or replace a tariff (sessions already started keep their price)')
    .argument('<tariffId>')
    .argument('<pricePerKwh>', 'NGN/kWh outside every window')
    .option(
      '--window <spec>',
      'a time-of-day price in the site’s zone, "mon,tue 18:00-22:00 450" (repeat for more)',
      windowArg,
    )
    .action(
      withClient(
        (c, o: RemoteOptions & { window?: WindowAnswer[] }, id: string, price: string) =>
          c.send('PUT', `/tariffs/${encodeURIComponent(id)}`, {
            pricePerKwh: priceArg(price),
            windows: o.window ?? [],
          }),
        tariffText,
      ),
    );
  remote(tariff, 'delete', 'delete a tariff no connector uses')
    .argument('<tariffId>')
    .action(
      withClient(
        (c, _o, id: string) => c.send('DELETE', `/tariffs/${encodeURIComponent(id)}`),
        (a: { id: string }) => `tariff ${a.id} deleted`,
      ),
    );
}
