import type { Command } from 'commander';
import type { Alert } from '../../alerts/alert.js';
import type { Delivery } from '../../alerts/deliveries.js';
import { deliveryWords } from '../../alerts/delivery-words.js';
import { formatTable, type OperatorClient } from './client.js';
import { remote, withClient, type RemoteOptions } from './operator-commands.js';

type AlertAnswer = Alert & { deliveries: Delivery[] };

interface AlertList {
  alerts: AlertAnswer[];
  openCount: number;
  webhook: { configured: boolean; undelivered: number };
}

const iso = (t: string): string => t;
const deliveryText = (d: Delivery): string => deliveryWords(d, iso);

const listText = (a: AlertList): string =>
  formatTable(
    a.alerts.map((alert) => ({
      ...alert,
      webhook: alert.deliveries
        .map((d) => `${d.type.slice('alert.'.length)}: ${deliveryText(d)}`)
        .join('; '),
    })),
    ['id', 'kind', 'subject', 'raisedAt', 'clearedAt', 'acknowledgedBy', 'webhook'],
  ) +
  `\n${a.openCount} open; ` +
  (a.webhook.configured ? `webhook: ${a.webhook.undelivered} undelivered` : 'no webhook');

/** Polls the test event until the receiver took it, it was given up, or `seconds` passed. */
async function awaitDelivery(c: OperatorClient, first: Delivery, seconds: number) {
  const until = Date.now() + seconds * 1000;
  let d = first;
  while (!d.deliveredAt && !d.givenUpAt && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    d = await c.get<Delivery>(`/alerts/deliveries/${encodeURIComponent(d.eventId)}`);
  }
  // Not delivered is a failed test: a script or a cron job sees it in the exit status.
  if (seconds > 0 && !d.deliveredAt) process.exitCode = 1;
  return d;
}

function secondsArg(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 3600) throw new Error('--wait must be 0 to 3600 seconds');
  return n;
}

/** `fleet-gateway alerts | alert acknowledge | alert test` (operator API). */
export function registerAlertCommands(program: Command): void {
  remote(program, 'alerts', "the site's alerts, newest first, with their webhook delivery")
    .option('--state <state>', 'open, closed or all', 'open')
    .option('--limit <n>', 'at most this many (1-500)', '100')
    .action(
      withClient(
        (c, o: RemoteOptions & { state: string; limit: string }) =>
          c.get('/alerts', { state: o.state, limit: o.limit }),
        listText,
      ),
    );
  const alert = program.command('alert').description('one alert (through the operator API)');
  remote(alert, 'acknowledge', 'say an alert has been seen (it clears an operator loss)')
    .argument('<alertId>')
    .action(
      withClient(
        (c, _o, id: string) => c.send('POST', `/alerts/${encodeURIComponent(id)}/acknowledge`),
        (a: AlertAnswer) =>
          `${a.kind} ${a.subject} acknowledged by ${a.acknowledgedBy ?? '-'} at ${a.acknowledgedAt ?? '-'}` +
          (a.clearedAt ? `; cleared ${a.clearedAt}` : '; still open'),
      ),
    );
  remote(alert, 'test', 'send a test event through the webhook and wait for its delivery')
    .option('--wait <seconds>', 'how long to wait for the receiver (0: do not)', secondsArg, 10)
    .action(
      withClient(
        async (c, o: RemoteOptions & { wait: number }) =>
          awaitDelivery(c, await c.send<Delivery>('POST', '/alerts/test'), o.wait),
        (d: Delivery) => `test event ${d.eventId}: ${deliveryText(d)}`,
      ),
    );
}
