import type { CircuitConfig, PowerConfig } from '../config/schema.js';

/**
 * Where a node's effective limit comes from: the config file's contracted limit, a schedule
 * window, an operator's override, a site meter or cloud feed, or the safe value used while that
 * feed is stale.
 */
export type LimitSource = 'config' | 'schedule' | 'operator' | 'feed' | 'fallback';

/** A node's effective power limit, W. */
export interface NodeLimit {
  nodeId: string;
  watts: number;
  source: LimitSource;
}

/**
 * What the load manager reads limits through. 'site' is the site's node id; a circuit's node id
 * is its config id. `onChange` returns its unsubscribe.
 */
export interface LimitReader {
  limit(nodeId: string): NodeLimit;
  onChange(listener: () => void): () => void;
}

/** The site's node id in every limit and allocation. */
export const SITE_NODE = 'site';

/** A limit given as kW, or as A per phase at the site's phases and voltage, in W. */
export function limitWatts(
  limit: { limitKw?: number | undefined; limitA?: number | undefined },
  power: Pick<PowerConfig, 'phases' | 'voltage'>,
): number {
  if (limit.limitKw !== undefined) return Math.round(limit.limitKw * 1000);
  if (limit.limitA !== undefined) return Math.round(limit.limitA * power.phases * power.voltage);
  throw new Error('a limit needs limitKw or limitA');
}

/** Every circuit of the tree, depth first. */
export function allCircuits(circuits: readonly CircuitConfig[]): CircuitConfig[] {
  return circuits.flatMap((c) => [c, ...allCircuits(c.circuits)]);
}

/**
 * The contracted limits of the config file: they never change while the gateway runs. The
 * run-time sources (schedule, operator, feed) only ever lower them (src/power/limit-board.ts).
 */
export class ConfigLimits implements LimitReader {
  private readonly limits = new Map<string, NodeLimit>();

  constructor(power: PowerConfig) {
    this.limits.set(SITE_NODE, {
      nodeId: SITE_NODE,
      watts: limitWatts(power, power),
      source: 'config',
    });
    for (const c of allCircuits(power.circuits)) {
      this.limits.set(c.id, { nodeId: c.id, watts: limitWatts(c, power), source: 'config' });
    }
  }

  /** Node ids: 'site' first, then the circuits depth first. */
  nodeIds(): string[] {
    return [...this.limits.keys()];
  }

  limit(nodeId: string): NodeLimit {
    const limit = this.limits.get(nodeId);
    if (!limit) throw new Error(`no power node ${nodeId}`);
    return limit;
  }

  onChange(): () => void {
    return () => {};
  }
}
