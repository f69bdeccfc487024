import { allocate, type AllocationSession } from './allocator.js';
import { AllowanceHistory } from './allowance-history.js';
import {
  connectorKey,
  type ActiveSession,
  type LoadManagerOptions,
  type ManagedConnector,
} from './power-model.js';

/**
 * What the power manager knows between rounds (what each charger accepted, what each connector
 * draws, the allocation last computed) and what follows from it with the site as it is now: the
 * limits left, each session's allowance, the allocator's inputs. The rounds, the reads and the
 * readings all work on this one state.
 */
export class PowerState {
  /** What each connector's charger accepted as its TxDefaultProfile, W. */
  readonly defaults = new Map<string, number>();
  /** What each running transaction's charger accepted as its TxProfile, by session id. */
  readonly confirmed = new Map<string, number>();
  /** The same over time: a reading is judged against what held when it was measured. */
  readonly allowances = new AllowanceHistory();
  /**
   * Sessions whose charger reconnected since its profile was accepted: it may still hold that
   * profile or have lost it (then its default holds); sent again, counted at the higher meanwhile.
   */
  readonly unsure = new Set<string>();
  /** The allocation last computed, by session id. */
  allocation = new Map<string, number | 'waiting'>();
  /** Chargers that refused a profile (or drew past theirs): counted at their maximum. */
  readonly refusing = new Set<string>();
  /** A session drawing well under its allowance: its maximum for the allocation, until it rises. */
  readonly drawCap = new Map<string, number>();
  /** Each connector's latest live power reading and when it was measured. */
  readonly measured = new Map<string, { watts: number; atMs: number }>();
  /** The last reading of a session drawing well under its allowance, not yet confirmed by a second. */
  readonly underDraw = new Map<string, number>();
  /** Sessions whose last reading was above their accepted allowance by more than the threshold. */
  readonly overDraw = new Set<string>();
  /**
   * Sessions whose charger draws past the profile it accepted (DrawReadings): counted at their
   * latest reading, sent nothing new until two readings in a row are within it again.
   */
  readonly drawing = new Map<string, { watts: number; atMs: number }>();
  /** The last reading was the first past (or, for `drawing`, back within) the accepted profile. */
  readonly firstPast = new Set<string>();
  readonly firstWithin = new Set<string>();
  /**
   * Sessions whose charger booted and has not reported their transaction since: it may have lost
   * it, and a TxProfile for a transaction it does not run is refused; none goes out until a live
   * reading names it (counted as `unsure` meanwhile).
   */
  readonly unheard = new Set<string>();

  constructor(private readonly o: LoadManagerOptions) {}

  now(): number {
    return this.o.now?.() ?? Date.now();
  }

  connectorMap(): Map<string, ManagedConnector> {
    return new Map(this.o.connectors().map((c) => [connectorKey(c.chargerId, c.connectorId), c]));
  }

  limitMap(): Map<string, number> {
    return new Map(this.o.nodeIds.map((n) => [n, this.o.limits.limit(n).watts]));
  }

  /**
   * The limits less what offline chargers' idle connectors may draw: each keeps the default it
   * accepted and cannot be sent another, so the sessions and the other defaults share the rest.
   */
  limitsLeft(
    connectors: Map<string, ManagedConnector>,
    active: readonly ActiveSession[] = this.o.active(),
  ): Map<string, number> {
    const left = this.limitMap();
    const busy = new Set(active.map((s) => connectorKey(s.chargerId, s.connectorId)));
    for (const [k, c] of connectors) {
      if (busy.has(k) || this.refusing.has(c.chargerId) || this.o.chargers.isOnline(c.chargerId))
        continue;
      const held = this.defaults.get(k) ?? 0;
      for (const node of c.path) left.set(node, (left.get(node) ?? 0) - held);
    }
    return left;
  }

  /**
   * What a session may draw now: its confirmed profile, else its connector's default, else its
   * max; the higher of the first two while its charger may have lost the profile (a reconnect).
   */
  currentAllowance(s: ActiveSession, c: ManagedConnector): number {
    if (this.refusing.has(s.chargerId)) return c.maxW;
    const fallback = this.defaults.get(connectorKey(s.chargerId, s.connectorId)) ?? c.maxW;
    const confirmed = this.confirmed.get(s.sessionId);
    if (confirmed === undefined) return fallback;
    return this.unsure.has(s.sessionId) ? Math.max(confirmed, fallback) : confirmed;
  }

  /** What a session counts for in the sums: what it may draw, or what it draws past that. */
  counted(s: ActiveSession, c: ManagedConnector): number {
    return Math.max(this.currentAllowance(s, c), this.drawing.get(s.sessionId)?.watts ?? 0);
  }

  /** The allocator's view of the drawing sessions on managed connectors. */
  inputs(
    connectors: Map<string, ManagedConnector>,
    active = this.o
      .active()
      .filter((s) => connectors.has(connectorKey(s.chargerId, s.connectorId))),
  ): AllocationSession[] {
    return active.map((s): AllocationSession => {
      const c = connectors.get(connectorKey(s.chargerId, s.connectorId)) as ManagedConnector;
      if (!this.o.chargers.isOnline(s.chargerId)) {
        // Offline, it keeps the last profile it accepted and cannot be sent another: allocated
        // what it is counted at, so the others share what is really left.
        const held = this.counted(s, c);
        return {
          sessionId: s.sessionId,
          path: c.path,
          minW: Math.min(c.minW, held),
          maxW: held,
          owedWh: s.owedWh,
          acceptsProfiles: false,
          startOrder: s.startedAtMs,
        };
      }
      const past = this.drawing.get(s.sessionId);
      if (past && !this.refusing.has(s.chargerId)) {
        // Drawing past its profile: the others share what it leaves (rule 1, at its reading).
        const watts = this.counted(s, c);
        return {
          sessionId: s.sessionId,
          path: c.path,
          minW: watts,
          maxW: watts,
          owedWh: s.owedWh,
          acceptsProfiles: false,
          startOrder: s.startedAtMs,
        };
      }
      const cap = this.drawCap.get(s.sessionId);
      return {
        sessionId: s.sessionId,
        path: c.path,
        minW: c.minW,
        maxW: cap === undefined ? c.maxW : Math.max(c.minW, Math.min(c.maxW, cap)),
        owedWh: s.owedWh,
        acceptsProfiles: !this.refusing.has(s.chargerId),
        startOrder: s.startedAtMs,
      };
    });
  }

  /**
   * What the connectors on a node may draw now, leaving one out (by key): each session what it
   * counts for (its allowance, or its reading past it), each idle connector the default its charger accepted (one that never
   * accepted a default draws nothing until it has a session, counted from then).
   */
  exposure(
    node: string,
    connectors: Map<string, ManagedConnector>,
    active: readonly ActiveSession[],
    except: string,
  ): number {
    const busy = new Map(active.map((s) => [connectorKey(s.chargerId, s.connectorId), s]));
    let sum = 0;
    for (const [k, c] of connectors) {
      if (k === except || !c.path.includes(node)) continue;
      const s = busy.get(k);
      if (s) sum += this.counted(s, c);
      else if (!this.refusing.has(c.chargerId)) sum += this.defaults.get(k) ?? 0;
    }
    return sum;
  }

  /**
   * Each idle connector's default (W) for charging profile takers: what the sessions leave on
   * every node above it (each counted as `counted` says), shared equally between the idle
   * connectors there, at most its all-busy share, 0 below its minimum. The defaults and the
   * sessions' allowances then add up to no more than any node's limit, so a session starting
   * does not take the site over it before its round.
   */
  defaultTargets(
    connectors: Map<string, ManagedConnector>,
    active: readonly ActiveSession[],
    counted: (s: ActiveSession, c: ManagedConnector) => number,
  ): Map<string, number> {
    const left = this.limitsLeft(connectors, active);
    for (const s of active) {
      const c = connectors.get(connectorKey(s.chargerId, s.connectorId)) as ManagedConnector;
      const w = counted(s, c);
      for (const node of c.path) left.set(node, (left.get(node) ?? 0) - w);
    }
    const busy = new Set(active.map((s) => connectorKey(s.chargerId, s.connectorId)));
    const idle = [...connectors].filter(
      ([k, c]) =>
        !busy.has(k) && !this.refusing.has(c.chargerId) && this.o.chargers.isOnline(c.chargerId),
    );
    const idleOn = new Map<string, number>();
    for (const [, c] of idle) for (const n of c.path) idleOn.set(n, (idleOn.get(n) ?? 0) + 1);
    const allBusy = this.safeDefaults();
    return new Map(
      idle.map(([k, c]) => {
        const share = Math.min(
          allBusy.get(k) ?? 0,
          c.maxW,
          ...c.path.map((n) => Math.floor(Math.max(0, left.get(n) ?? 0) / (idleOn.get(n) ?? 1))),
        );
        return [k, share >= c.minW ? share : 0];
      }),
    );
  }

  /**
   * Each managed connector's share of the limits as if every one of them were busy (0 where its
   * minimum does not fit): the default a charger holds before any session, and after a restart.
   */
  safeDefaults(): Map<string, number> {
    const connectors = this.o.connectors();
    const result = allocate(
      this.limitMap(),
      connectors.map((c, i) => ({
        sessionId: connectorKey(c.chargerId, c.connectorId),
        path: c.path,
        minW: c.minW,
        maxW: c.maxW,
        owedWh: 0,
        acceptsProfiles: true,
        startOrder: i,
      })),
      'equal',
    );
    return new Map([...result].map(([k, a]) => [k, a === 'waiting' ? 0 : a]));
  }
}
