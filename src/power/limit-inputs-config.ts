import type { CircuitConfig } from '../config/schema.js';
import { allCircuits, SITE_NODE } from './limits.js';

/**
 * What zod cannot see alone: a schedule window names a node of the power tree, and the feed
 * needs the uplink's broker (it is read on that connection). The problem, or undefined.
 */
export function powerInputsProblem(config: {
  power?:
    | { schedule: { node?: string | undefined }[]; feed?: unknown; circuits: CircuitConfig[] }
    | undefined;
  uplink: { url?: string | undefined };
}): string | undefined {
  const power = config.power;
  if (!power) return undefined;
  const ids = new Set([SITE_NODE, ...allCircuits(power.circuits).map((c) => c.id)]);
  for (const [i, w] of power.schedule.entries()) {
    if (w.node !== undefined && !ids.has(w.node))
      return `config key power.schedule.${i}.node: no site or circuit ${w.node}`;
  }
  if (power.feed !== undefined && config.uplink.url === undefined)
    return 'config key power.feed: the feed is read on the uplink: set uplink.url';
  return undefined;
}
