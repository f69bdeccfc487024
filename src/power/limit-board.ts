import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import { realTimers, type EdgeTimers } from './edge-timer.js';
import type { LimitReader, LimitSource, NodeLimit } from './limits.js';
import type { PowerSchedule } from './schedule.js';

/** An operator's run-time limit on one node (PUT /admin/v1/site/power/limits/:nodeId). */
export interface OperatorOverride {
  nodeId: string;
  watts: number;
  reason: string;
  /** ms since the epoch; null: until cleared. */
  expiresAtMs: number | null;
  setBy: string;
  setAtMs: number;
}

/** Where overrides outlive a restart (an override forgotten at boot would raise the limit). */
export interface OverridePersistence {
  load(): OperatorOverride[];
  save(override: OperatorOverride): void;
  remove(nodeId: string): void;
}

/** One limit in force on a node, for the operator's read (the lowest binds). */
export interface Constraint {
  source: LimitSource;
  watts: number;
  /** ms since the epoch when it stops applying by itself (schedule edge, feed staleness, expiry). */
  untilMs: number | null;
}

interface FeedReading {
  watts: number;
  receivedAtMs: number;
  freshUntilMs: number;
}

/** Without a configured fallback or a schedule, a stale feed leaves this share of the contract. */
export const FALLBACK_FRACTION = 0.5;

export interface LimitBoardOptions {
  /** The contracted limits from the config (load-core's static reader). */
  base: LimitReader;
  /** Every node id the base knows: the site and its circuits. */
  nodeIds: readonly string[];
  siteNodeId: string;
  clock: Clock;
  timers?: EdgeTimers;
  schedule?: PowerSchedule | undefined;
  /** Present when a feed is configured: the site is covered from boot (fallback until a value). */
  feed?: { fallbackWatts?: number | undefined } | undefined;
  persistence?: OverridePersistence | undefined;
  log?: Logger | undefined;
}

/**
 * The run-time limit of every node: the lowest of the constraints in force (the config's
 * contracted limit, the schedule window, the feed's value while fresh or the fallback once stale,
 * the operator's override until it expires). Every constraint is a minimum taken with the
 * contract, so no source can raise a node above it. Re-evaluated when an input arrives and by
 * one timer armed at the next moment something ends or starts; listeners hear of each change of
 * a node's limit or binding source once.
 */
export class LimitBoard implements LimitReader {
  private readonly timers: EdgeTimers;
  private readonly listeners = new Set<() => void>();
  private readonly overrides = new Map<string, OperatorOverride>();
  private readonly feed = new Map<string, FeedReading>();
  private current = new Map<string, NodeLimit>();
  private cancelTimer: (() => void) | null = null;
  private readonly stopBase: () => void;
  private closed = false;

  constructor(private readonly o: LimitBoardOptions) {
    this.timers = o.timers ?? realTimers;
    for (const saved of o.persistence?.load() ?? []) {
      if (o.nodeIds.includes(saved.nodeId)) this.overrides.set(saved.nodeId, saved);
    }
    this.stopBase = o.base.onChange(() => this.evaluate());
    this.evaluate();
  }

  limit(nodeId: string): NodeLimit {
    return this.current.get(nodeId) ?? this.o.base.limit(nodeId);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  knows(nodeId: string): boolean {
    return this.o.nodeIds.includes(nodeId);
  }

  get nodeIds(): readonly string[] {
    return this.o.nodeIds;
  }

  /** The node's contracted limit (config), W. */
  contract(nodeId: string): number {
    return this.o.base.limit(nodeId).watts;
  }

  /** Every constraint in force on the node now, the contract first. */
  constraints(nodeId: string): Constraint[] {
    return this.constraintsAt(nodeId, this.o.clock.now());
  }

  override(nodeId: string): OperatorOverride | undefined {
    const o = this.overrides.get(nodeId);
    return o && !expired(o, this.o.clock.now()) ? o : undefined;
  }

  /** Sets (or replaces) the operator's limit on a node; saved before it applies. */
  setOverride(override: OperatorOverride): NodeLimit {
    this.o.persistence?.save(override);
    this.overrides.set(override.nodeId, override);
    this.evaluate();
    return this.limit(override.nodeId);
  }

  /** Clears the operator's limit on a node; false when it had none in force. */
  clearOverride(nodeId: string): boolean {
    const had = this.override(nodeId) !== undefined;
    this.o.persistence?.remove(nodeId);
    this.overrides.delete(nodeId);
    this.evaluate();
    return had;
  }

  /** A feed value for a node, fresh for `validForMs` from now (feed.ts validated it). */
  feedValue(nodeId: string, watts: number, validForMs: number): void {
    const now = this.o.clock.now();
    this.feed.set(nodeId, { watts, receivedAtMs: now, freshUntilMs: now + validForMs });
    this.evaluate();
  }

  /** The feed's last value per node, fresh or not. */
  feedReadings(): { nodeId: string; watts: number; receivedAtMs: number; freshUntilMs: number }[] {
    return [...this.feed].map(([nodeId, r]) => ({ nodeId, ...r }));
  }

  /** The value a stale feed leaves a node (docs: Changing the limit at run time). */
  fallbackWatts(nodeId: string): number {
    const configured = nodeId === this.o.siteNodeId ? this.o.feed?.fallbackWatts : undefined;
    return (
      configured ??
      this.o.schedule?.lowest(nodeId) ??
      Math.floor(this.contract(nodeId) * FALLBACK_FRACTION)
    );
  }

  close(): void {
    this.closed = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.stopBase();
    this.listeners.clear();
  }

  /** Recomputes every node at the clock's now; tells listeners once if anything changed. */
  evaluate(): void {
    if (this.closed) return;
    const now = this.o.clock.now();
    for (const [nodeId, o] of this.overrides) {
      if (!expired(o, now)) continue;
      this.overrides.delete(nodeId);
      this.o.persistence?.remove(nodeId);
      this.o.log?.info(
        { nodeId, reason: o.reason, setBy: o.setBy },
        'operator power limit expired',
      );
    }
    const next = new Map<string, NodeLimit>();
    let changed = false;
    for (const nodeId of this.o.nodeIds) {
      const limit = binding(nodeId, this.constraintsAt(nodeId, now));
      next.set(nodeId, limit);
      const before = this.current.get(nodeId);
      if (!before || before.watts !== limit.watts || before.source !== limit.source) changed = true;
    }
    const first = this.current.size === 0;
    this.current = next;
    this.arm(now);
    if (!changed || first) return;
    this.o.log?.info(
      {
        limits: [...next.values()].map((l) => ({
          nodeId: l.nodeId,
          watts: l.watts,
          source: l.source,
        })),
      },
      'site power limits changed',
    );
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch (err) {
        this.o.log?.error({ err: (err as Error).message }, 'power limit listener failed');
      }
    }
  }

  private constraintsAt(nodeId: string, now: number): Constraint[] {
    const base = this.o.base.limit(nodeId);
    const out: Constraint[] = [{ source: base.source, watts: base.watts, untilMs: null }];
    const scheduled = this.o.schedule?.inForce(now).get(nodeId);
    if (scheduled !== undefined) {
      out.push({
        source: 'schedule',
        watts: scheduled,
        untilMs: this.o.schedule?.nextEdge(now) ?? null,
      });
    }
    const reading = this.feed.get(nodeId);
    const covered = this.o.feed !== undefined && (nodeId === this.o.siteNodeId || reading);
    if (reading && now < reading.freshUntilMs) {
      out.push({ source: 'feed', watts: reading.watts, untilMs: reading.freshUntilMs });
    } else if (covered) {
      out.push({ source: 'fallback', watts: this.fallbackWatts(nodeId), untilMs: null });
    }
    const override = this.overrides.get(nodeId);
    if (override && !expired(override, now)) {
      out.push({ source: 'operator', watts: override.watts, untilMs: override.expiresAtMs });
    }
    return out;
  }

  /** One timer at the next moment a constraint starts or ends. */
  private arm(now: number): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
    let at = this.o.schedule?.nextEdge(now);
    const consider = (t: number | null) => {
      if (t !== null && t > now && (at === undefined || t < at)) at = t;
    };
    for (const r of this.feed.values()) consider(r.freshUntilMs);
    for (const o of this.overrides.values()) consider(o.expiresAtMs);
    if (at === undefined) return;
    this.cancelTimer = this.timers.set(at - now, () => {
      this.cancelTimer = null;
      this.evaluate();
    });
  }
}

function expired(o: OperatorOverride, now: number): boolean {
  return o.expiresAtMs !== null && now >= o.expiresAtMs;
}

/** The lowest constraint; on a tie the first listed (the contract before anything that matches it). */
function binding(nodeId: string, constraints: Constraint[]): NodeLimit {
  let best = constraints[0] as Constraint;
  for (const c of constraints) if (c.watts < best.watts) best = c;
  return { nodeId, watts: best.watts, source: best.source };
}
