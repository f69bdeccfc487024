import { Option, type Command } from 'commander';
import { ID_TOKEN_TYPES } from '../../id-tokens/id-token-store.js';
import { tokenValueProblem } from '../../id-tokens/token-input.js';
import { formatTable } from './client.js';
import { remote, withClient, type RemoteOptions } from './operator-commands.js';

const COLUMNS = ['tokenId', 'kind', 'type', 'masked', 'label', 'state', 'expiresAt', 'source'];

interface TokenAnswer {
  tokenId: string;
  driverId: string;
  masked: string;
  state: string;
  blockedReason: string | null;
}

const list = (a: { tokens: Record<string, unknown>[] }) =>
  a.tokens.length === 0 ? 'no bound token' : formatTable(a.tokens, COLUMNS);
const changedText = (verb: string) => (a: { changed: boolean; token?: TokenAnswer }) =>
  `${a.changed ? verb : `already ${verb}`}${a.token ? `: ${a.token.masked} (${a.token.state})` : ''}`;
const path = (driverId: string, tokenId?: string) =>
  `/drivers/${encodeURIComponent(driverId)}/tokens${tokenId ? `/${encodeURIComponent(tokenId)}` : ''}`;

/**
 * `fleet-gateway tokens <driverId>` and `token find|bind|block|unblock|unbind` (operator API):
 * drivers' cards and vehicles. A value is checked here before any request, with the API's rule.
 */
export function registerTokenCommands(program: Command): void {
  remote(program, 'tokens', "a driver's bound cards and vehicles (masked)")
    .argument('<driverId>')
    .action(withClient((c, _o, driverId: string) => c.get(path(driverId)), list));

  const token = program
    .command('token')
    .description("a driver's card or vehicle (through the operator API)");

  remote(token, 'find', 'the driver a card or vehicle is bound to, by any form of its value')
    .argument('<value>')
    .action(
      withClient(
        (c, _o, value: string) => c.get('/tokens', { search: value }),
        (a: { tokens: Record<string, unknown>[] }) =>
          a.tokens.length === 0
            ? 'no driver holds it'
            : formatTable(a.tokens, ['driverId', ...COLUMNS]),
      ),
    );

  remote(token, 'bind', 'bind a card or vehicle to a driver (again: updates its label or expiry)')
    .argument('<driverId>')
    .argument('<value>', "the card's UID or the vehicle's identifier, in any form")
    .addOption(new Option('--kind <kind>').choices(['card', 'vehicle']).default('card'))
    .addOption(
      new Option(
        '--type <type>',
        'OCPP 2.0.1 token type (default ISO14443, MacAddress for a vehicle)',
      ).choices([...ID_TOKEN_TYPES]),
    )
    .option('--label <text>', 'what the operator calls it ("blue fob", a plate number)')
    .option('--expires-at <iso>', 'taps after this time are answered Expired')
    .action(
      withClient(
        (
          c,
          o: RemoteOptions & { kind: string; type?: string; label?: string; expiresAt?: string },
          driverId: string,
          value: string,
        ) => {
          const problem = tokenValueProblem(value);
          if (problem !== null) throw new Error(problem);
          return c.send('POST', path(driverId), {
            kind: o.kind,
            type: o.type ?? (o.kind === 'vehicle' ? 'MacAddress' : 'ISO14443'),
            value,
            ...(o.label === undefined ? {} : { label: o.label }),
            ...(o.expiresAt === undefined ? {} : { expiresAt: o.expiresAt }),
          });
        },
        (a: { created: boolean; changed: boolean; token: TokenAnswer }) =>
          `${a.created ? 'bound' : a.changed ? 'updated' : 'already bound'}: ${a.token.tokenId} ` +
          `${a.token.masked} to ${a.token.driverId} (${a.token.state})`,
      ),
    );

  remote(token, 'block', 'block a bound token: its taps are answered Blocked')
    .argument('<driverId>')
    .argument('<tokenId>')
    .option('--reason <text>', 'why (shown with the token)')
    .action(
      withClient(
        (c, o: RemoteOptions & { reason?: string }, driverId: string, tokenId: string) =>
          c.send(
            'POST',
            `${path(driverId, tokenId)}/block`,
            o.reason === undefined ? {} : { reason: o.reason },
          ),
        changedText('blocked'),
      ),
    );

  remote(token, 'unblock', 'unblock a bound token')
    .argument('<driverId>')
    .argument('<tokenId>')
    .action(
      withClient(
        (c, _o, driverId: string, tokenId: string) =>
          c.send('POST', `${path(driverId, tokenId)}/unblock`, {}),
        changedText('unblocked'),
      ),
    );

  remote(token, 'unbind', 'unbind a token from its driver (its taps are answered Invalid)')
    .argument('<driverId>')
    .argument('<tokenId>')
    .action(
      withClient(
        (c, _o, driverId: string, tokenId: string) => c.send('DELETE', path(driverId, tokenId)),
        changedText('unbound'),
      ),
    );
}
