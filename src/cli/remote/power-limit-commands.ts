import type { Command } from 'commander';
import { formatTable } from './client.js';
import { remote, withClient, type RemoteOptions } from './operator-commands.js';

interface NodeAnswer {
  nodeId: string;
  limitKw: number;
  source: string;
  contractKw: number;
  override: { limitKw: number; reason: string; expiresAt: string | null } | null;
  cleared?: boolean;
}

const nodeLine = (n: NodeAnswer) =>
  `${n.nodeId}: ${n.limitKw} kW (${n.source}; contract ${n.contractKw} kW)` +
  (n.override
    ? `; operator ${n.override.limitKw} kW until ${n.override.expiresAt ?? 'cleared'}: ${n.override.reason}`
    : '') +
  (n.cleared === undefined
    ? ''
    : n.cleared
      ? '; operator limit cleared'
      : '; no operator limit was set');

/** A power in kW from the command line (refused before any request otherwise). */
function kwArg(text: string): number {
  const n = Number(text);
  if (!/^\d+(\.\d{1,3})?$/.test(text) || !Number.isFinite(n))
    throw new Error('limitKw must be a number of kW ≥ 0 with at most 3 decimals');
  return n;
}

/** The `site` command group (created here or joined when another module made it). */
function siteCommand(program: Command): Command {
  return (
    program.commands.find((c) => c.name() === 'site') ??
    program.command('site').description('the site (through the operator API)')
  );
}

/** `fleet-gateway site limits | site limit set | site limit clear` (operator API). */
export function registerPowerLimitCommands(program: Command): void {
  const site = siteCommand(program);
  remote(site, 'limits', 'every node’s power limit and what binds it').action(
    withClient(
      (c) => c.get('/site/power/limits'),
      (a: { timeZone: string; nodes: NodeAnswer[] }) =>
        formatTable(
          a.nodes.map((n) => ({ ...n, override: n.override?.limitKw })),
          ['nodeId', 'limitKw', 'source', 'contractKw', 'override'],
        ) + `\ntime zone: ${a.timeZone}`,
    ),
  );
  const limit = site.command('limit').description('the operator’s power limit on a node');
  remote(limit, 'set', 'lower a node’s power limit (the site or a circuit)')
    .argument('<nodeId>', '`site` or a circuit id')
    .argument('<limitKw>', 'kW, at most the node’s contracted limit')
    .requiredOption('--reason <text>', 'why (kept in the audit trail)')
    .option(
      '--expires-at <iso>',
      'when the limit ends by itself (ISO 8601); default: until cleared',
    )
    .action(
      withClient(
        (
          c,
          o: RemoteOptions & { reason: string; expiresAt?: string },
          nodeId: string,
          limitKw: string,
        ) =>
          c.send('PUT', `/site/power/limits/${encodeURIComponent(nodeId)}`, {
            limitKw: kwArg(limitKw),
            reason: o.reason,
            ...(o.expiresAt === undefined ? {} : { expiresAt: o.expiresAt }),
          }),
        nodeLine,
      ),
    );
  remote(limit, 'clear', 'clear the operator’s power limit on a node')
    .argument('<nodeId>')
    .action(
      withClient(
        (c, _o, nodeId: string) =>
          c.send('DELETE', `/site/power/limits/${encodeURIComponent(nodeId)}`),
        nodeLine,
      ),
    );
}
