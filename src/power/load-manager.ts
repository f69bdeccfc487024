import type { PowerAllowance } from '../charging/power-allowance.js';
import type { ChargerCommands, MeterSample, StepOutcome } from '../ocpp/port.js';
import type { Logger } from '../shared/log.js';
import { allocate, type AllocationPolicy, type AllocationSession } from './allocator.js';
import { AllowanceHistory } from './allowance-history.js';
import type { LimitReader, NodeLimit } from './limits.js';
import { clearUnrefTimer } from '../shared/unref-timer.js';

/** A connector under load management, as the config describes it. */
export interface ManagedConnector {
  chargerId: string;
  connectorId: string;
  /** Node ids from 'site' down to its circuit. */
  path: readonly string[];
  minW: number;
  maxW: number;
  /** AC phases (for chargers that take a current limit); undefined for DC. */
  phases: 1 | 3 | undefined;
}

/** A session drawing power now (charging or stopping), as the charging layer holds it. */
export interface ActiveSession {
  sessionId: string;
  chargerId: string;
  connectorId: string;
  transactionRef: string;
  owedWh: number;
  /** When it started charging, ms; the most recently started wait first. */
  startedAtMs: number;
}

export interface LoadManagerOptions {
  log: Logger;
  limits: LimitReader;
  /** Every node id of the tree ('site' first). */
  nodeIds: readonly string[];
  policy: AllocationPolicy;
  /** The managed connectors: what the config's chargers (and circuits) say of them. */
  connectors: () => readonly ManagedConnector[];
  active: () => readonly ActiveSession[];
  chargers: Pick<ChargerCommands, 'isOnline' | 'setPowerLimit'>;
  /** Pause before an undelivered allowance is tried again; default RETRY_MS. */
  retryMs?: number;
  /** Counts for the metrics. */
  counters?: { reallocation(reason: string): void; refusal(chargerId: string): void };
  /** The gateway's clock, the one samples' `measuredAtMs` is on; default Date.now. */
  now?: () => number;
}

/** A session's allowance as the driver's session read and the stop prediction see it. */
export interface SessionPower {
  allocatedW: number;
  waiting: boolean;
}

export interface SessionAllocationView extends SessionPower {
  sessionId: string;
  chargerId: string;
  connectorId: string;
  /** What the charger last accepted for it (W); null before it accepted one. */
  confirmedW: number | null;
  /** The charger refuses profiles: counted at its maximum. */
  refusesProfiles: boolean;
  measuredW: number | null;
}

export interface NodeView extends NodeLimit {
  /** What the managed sessions on this node are allowed now, W. */
  allocatedW: number;
  /** The sum of the latest live power readings of its connectors, W. */
  measuredW: number;
}

/**
 * Measured power this far from the allocation starts a reallocation: 10% of the allowance, and
 * at least 1 kW (meter noise and AC phase steps stay under it).
 */
export const DEPARTURE_FRACTION = 0.1;
export const DEPARTURE_MIN_W = 1000;

/** Pause before a round that could not deliver everything is tried again. */
export const RETRY_MS = 2000;

const key = (chargerId: string, connectorId: string): string => `${chargerId}\u0000${connectorId}`;

/**
 * The site's load manager: on every change (session start or stop, limit change, power departing
 * from its allowance, charger reconnect or boot) it reallocates and sends the new allowances as
 * charging profiles, every lower one first and answered (or timed out: that connector is then
 * still counted at its old, higher allowance) before any raise, so the allowances never add up
 * to more than a node's limit, in flight included. It hears the chargers after the charging layer
 * (PowerListener) and never calls into it: charging reads the allowances through PowerAllowance.
 */
export class LoadManager implements PowerAllowance {
  /** What each connector's charger accepted as its TxDefaultProfile, W. */
  private readonly defaults = new Map<string, number>();
  /** What each running transaction's charger accepted as its TxProfile, by session id. */
  private readonly confirmed = new Map<string, number>();
  /** The same over time: a reading is judged against what held when it was measured. */
  private readonly allowances = new AllowanceHistory();
  /**
   * Sessions whose charger reconnected since its profile was accepted: it may still hold that
   * profile or have lost it (then its default holds); sent again, counted at the higher meanwhile.
   */
  private readonly unsure = new Set<string>();
  /** The allocation last computed, by session id. */
  private allocation = new Map<string, number | 'waiting'>();
  /** Chargers that refused a profile (or drew past theirs): counted at their maximum. */
  private readonly refusing = new Set<string>();
  /** A session drawing well under its allowance: its maximum for the allocation, until it rises. */
  private readonly drawCap = new Map<string, number>();
  /** Each connector's latest live power reading and when it was measured. */
  private readonly measured = new Map<string, { watts: number; atMs: number }>();
  /** The last reading of a session drawing well under its allowance, not yet confirmed by a second. */
  private readonly underDraw = new Map<string, number>();
  /** Sessions whose last reading was above their accepted allowance by more than the threshold. */
  private readonly overDraw = new Set<string>();
  private running: Promise<void> | null = null;
  private again: string | null = null;
  private unsubscribe: (() => void) | null = null;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Told when a charger accepted a session's new allowance (the stop prediction). */
  private readonly allowanceChanged = new Set<(sessionId: string) => void>();

  constructor(private readonly o: LoadManagerOptions) {}

  /** Starts listening to limit changes and sends the safe default to every online charger. */
  start(): void {
    this.unsubscribe = this.o.limits.onChange(() => this.reallocate('limit'));
    const chargers = new Set(this.o.connectors().map((c) => c.chargerId));
    for (const chargerId of chargers) {
      if (this.o.chargers.isOnline(chargerId)) this.chargerUp(chargerId, 'start');
    }
  }

  close(): void {
    this.closed = true;
    this.unsubscribe?.();
    clearUnrefTimer(this.retryTimer);
  }

  /**
   * What the session's charger is allowed now (the driver's read), or null when the session is
   * not under load management: its accepted profile (else its connector's default, else its
   * maximum), never a value still in flight or held back, so a session held at 0 W reads as
   * waiting even while its allocation already says otherwise.
   */
  sessionPower(sessionId: string): SessionPower | null {
    if (!this.allocation.has(sessionId)) return null;
    const s = this.o.active().find((a) => a.sessionId === sessionId);
    const c = s && this.connectorMap().get(key(s.chargerId, s.connectorId));
    if (!s || !c) return null;
    const allowedW = this.currentAllowance(s, c);
    return { allocatedW: allowedW, waiting: allowedW === 0 };
  }

  /** The allocation last computed for the session (the operator's view), or null. */
  private allocated(sessionId: string): SessionPower | null {
    const a = this.allocation.get(sessionId);
    if (a === undefined) return null;
    return a === 'waiting' ? { allocatedW: 0, waiting: true } : { allocatedW: a, waiting: false };
  }

  /**
   * What the session's charger has accepted as its ceiling, W (null when none is in force): the
   * stop prediction plans with it only once the charger took it, never on a value still in flight.
   */
  confirmedPowerW(sessionId: string): number | null {
    return this.unsure.has(sessionId) ? null : (this.confirmed.get(sessionId) ?? null);
  }

  allowedPowerW(sessionId: string): number | null {
    return this.confirmedPowerW(sessionId);
  }

  onChange(changed: (sessionId: string) => void): () => void {
    this.allowanceChanged.add(changed);
    return () => this.allowanceChanged.delete(changed);
  }

  /** Its connector's last reading no longer says what it draws (the site view). */
  forgetReading(chargerId: string, connectorId: string): void {
    this.measured.delete(key(chargerId, connectorId));
  }

  /**
   * What a session started now on this connector would be allocated (W), the sessions drawing
   * now and their chargers as they are: null when it would wait or the connector is not managed.
   */
  powerIfStarted(chargerId: string, connectorId: string, owedWh: number): number | null {
    const connectors = this.connectorMap();
    const c = connectors.get(key(chargerId, connectorId));
    if (!c) return null;
    const probe = '\u0000quote';
    const inputs = [
      ...this.inputs(connectors),
      {
        sessionId: probe,
        path: c.path,
        minW: c.minW,
        maxW: c.maxW,
        owedWh,
        acceptsProfiles: !this.refusing.has(chargerId),
        startOrder: Number.MAX_SAFE_INTEGER,
      },
    ];
    const a = allocate(this.limitsLeft(connectors), inputs, this.o.policy).get(probe);
    return typeof a === 'number' && a > 0 ? a : null;
  }

  /** Every node's limit, allowance and measured power, and every session's allocation. */
  view(): { nodes: NodeView[]; sessions: SessionAllocationView[] } {
    const connectors = this.connectorMap();
    const active = this.o.active();
    const sessions = active.map((s): SessionAllocationView => {
      const power = this.allocated(s.sessionId) ?? { allocatedW: 0, waiting: false };
      return {
        sessionId: s.sessionId,
        chargerId: s.chargerId,
        connectorId: s.connectorId,
        ...power,
        confirmedW: this.confirmedPowerW(s.sessionId),
        refusesProfiles: this.refusing.has(s.chargerId),
        measuredW: this.measured.get(key(s.chargerId, s.connectorId))?.watts ?? null,
      };
    });
    const nodes = this.o.nodeIds.map((nodeId): NodeView => {
      const on = (c: { chargerId: string; connectorId: string }): boolean =>
        connectors.get(key(c.chargerId, c.connectorId))?.path.includes(nodeId) ?? false;
      return {
        ...this.o.limits.limit(nodeId),
        allocatedW: sessions.filter(on).reduce((sum, s) => sum + s.allocatedW, 0),
        measuredW: [...connectors.values()]
          .filter(on)
          .reduce(
            (sum, c) => sum + (this.measured.get(key(c.chargerId, c.connectorId))?.watts ?? 0),
            0,
          ),
      };
    });
    return { nodes, sessions };
  }

  /**
   * Reallocates now, or once the one under way has finished (changes during it are folded into
   * one more round). Resolves when the allowances it computed have been sent.
   */
  reallocate(reason: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running) {
      this.again = reason;
      return this.running;
    }
    this.running = (async () => {
      let next: string | null = reason;
      while (next !== null && !this.closed) {
        this.again = null;
        this.o.counters?.reallocation(next);
        let retry = false;
        try {
          retry = await this.round(next);
        } catch (err) {
          this.o.log.error({ err, reason: next }, 'power reallocation failed');
          retry = true;
        }
        next = this.again;
        if (retry && next === null) this.retryLater();
      }
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** A lower that was not answered, or a raise held back by it, is tried again after a pause. */
  private retryLater(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.reallocate('retry');
    }, this.o.retryMs ?? RETRY_MS);
    this.retryTimer.unref();
  }

  /** Resolves once no reallocation is under way (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  private connectorMap(): Map<string, ManagedConnector> {
    return new Map(this.o.connectors().map((c) => [key(c.chargerId, c.connectorId), c]));
  }

  private limitMap(): Map<string, number> {
    return new Map(this.o.nodeIds.map((n) => [n, this.o.limits.limit(n).watts]));
  }

  /**
   * The limits less what offline chargers' idle connectors may draw: each keeps the default it
   * accepted and cannot be sent another, so the sessions and the other defaults share the rest.
   */
  private limitsLeft(
    connectors: Map<string, ManagedConnector>,
    active: readonly ActiveSession[] = this.o.active(),
  ): Map<string, number> {
    const left = this.limitMap();
    const busy = new Set(active.map((s) => key(s.chargerId, s.connectorId)));
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
  private currentAllowance(s: ActiveSession, c: ManagedConnector): number {
    if (this.refusing.has(s.chargerId)) return c.maxW;
    const fallback = this.defaults.get(key(s.chargerId, s.connectorId)) ?? c.maxW;
    const confirmed = this.confirmed.get(s.sessionId);
    if (confirmed === undefined) return fallback;
    return this.unsure.has(s.sessionId) ? Math.max(confirmed, fallback) : confirmed;
  }

  /** The allocator's view of the drawing sessions on managed connectors. */
  private inputs(
    connectors: Map<string, ManagedConnector>,
    active = this.o.active().filter((s) => connectors.has(key(s.chargerId, s.connectorId))),
  ): AllocationSession[] {
    return active.map((s): AllocationSession => {
      const c = connectors.get(key(s.chargerId, s.connectorId)) as ManagedConnector;
      if (!this.o.chargers.isOnline(s.chargerId)) {
        // Offline, it keeps the last profile it accepted and cannot be sent another: allocated
        // what it is counted at, so the others share what is really left.
        const held = this.currentAllowance(s, c);
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

  /** One reallocation; true when something was not delivered and a later round should retry. */
  private async round(reason: string): Promise<boolean> {
    const connectors = this.connectorMap();
    const active = this.o.active().filter((s) => connectors.has(key(s.chargerId, s.connectorId)));
    const inputs = this.inputs(connectors, active);
    const limits = this.limitMap();
    const allocation = allocate(this.limitsLeft(connectors, active), inputs, this.o.policy);
    this.allocation = allocation;
    for (const id of [...this.confirmed.keys()]) {
      if (!allocation.has(id)) this.confirmed.delete(id);
    }
    for (const map of [this.drawCap, this.underDraw]) {
      for (const id of [...map.keys()]) if (!allocation.has(id)) map.delete(id);
    }
    for (const set of [this.overDraw, this.unsure]) {
      for (const id of [...set]) if (!allocation.has(id)) set.delete(id);
    }
    this.allowances.retain((id) => allocation.has(id));

    const changes = active.flatMap((s) => {
      const a = allocation.get(s.sessionId);
      if (a === undefined) return [];
      const c = connectors.get(key(s.chargerId, s.connectorId)) as ManagedConnector;
      const target = a === 'waiting' ? 0 : a;
      const current = this.currentAllowance(s, c);
      if (this.confirmed.get(s.sessionId) === target && !this.unsure.has(s.sessionId)) return [];
      // An offline charger keeps counting at what it was last allowed; it gets the new value
      // when it is back (chargerUp).
      if (!this.o.chargers.isOnline(s.chargerId)) return [];
      if (this.refusing.has(s.chargerId)) {
        // Counted at its maximum, but a profile it accepted before (a 0 W wait, before it was
        // found drawing past one) would still hold it there: lifted, once, when it fits.
        const held = this.confirmed.get(s.sessionId);
        if (held === undefined || held >= target) return [];
        return [{ s, c, target, current: held, lift: true }];
      }
      return [{ s, c, target, current, lift: false }];
    });
    const lowers = changes.filter((x) => x.target <= x.current);
    const raises = changes.filter((x) => x.target > x.current);
    // The idle connectors' defaults follow what the sessions leave (a session starting there
    // draws its default until its own round): lowered with the lowers, raised with the raises.
    const defaultTargets = this.defaultTargets(connectors, active, (s) => {
      const a = allocation.get(s.sessionId);
      return typeof a === 'number' ? a : 0;
    });
    const defaultChanges = [...defaultTargets].flatMap(([k, target]) => {
      const c = connectors.get(k) as ManagedConnector;
      const current = this.defaults.get(k);
      if (current === target || !this.o.chargers.isOnline(c.chargerId)) return [];
      return [{ c, target, current: current ?? c.maxW }];
    });
    const defaultLowers = defaultChanges.filter((x) => x.target < x.current);
    const defaultRaises = defaultChanges.filter((x) => x.target > x.current);
    this.o.log.info(
      {
        reason,
        sessions: active.length,
        lowers: lowers.length,
        raises: raises.length,
        defaultLowers: defaultLowers.length,
        defaultRaises: defaultRaises.length,
      },
      'power reallocated',
    );

    const lowered = await Promise.all([
      ...lowers.map((x) => this.send(x.s, x.c, x.target)),
      ...defaultLowers.map((x) => this.sendDefault(x.c, x.target)),
    ]);
    let retry = lowered.some((ok) => !ok);

    // A raise goes out only when every node it sits on stays within its limit with what the
    // others are allowed now (a lower that failed still counts at its old, higher value), the
    // idle connectors' defaults included.
    const fits = (c: ManagedConnector, watts: number): boolean =>
      c.path.every(
        (node) =>
          this.exposure(node, connectors, active, key(c.chargerId, c.connectorId)) + watts <=
          (limits.get(node) ?? 0),
      );
    for (const x of raises) {
      if (x.lift) {
        if (fits(x.c, x.target)) await this.lift(x.s, x.c, x.target);
      } else if (!fits(x.c, x.target)) retry = true;
      else if (!(await this.send(x.s, x.c, x.target))) retry = true;
    }
    for (const x of defaultRaises) {
      if (!fits(x.c, x.target)) retry = true;
      else if (!(await this.sendDefault(x.c, x.target))) retry = true;
    }
    return retry;
  }

  /**
   * What the connectors on a node may draw now, leaving one out (by key): each session its
   * current allowance, each idle connector the default its charger accepted (one that never
   * accepted a default draws nothing until it has a session, counted from then).
   */
  private exposure(
    node: string,
    connectors: Map<string, ManagedConnector>,
    active: readonly ActiveSession[],
    except: string,
  ): number {
    const busy = new Map(active.map((s) => [key(s.chargerId, s.connectorId), s]));
    let sum = 0;
    for (const [k, c] of connectors) {
      if (k === except || !c.path.includes(node)) continue;
      const s = busy.get(k);
      if (s) sum += this.currentAllowance(s, c);
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
  private defaultTargets(
    connectors: Map<string, ManagedConnector>,
    active: readonly ActiveSession[],
    counted: (s: ActiveSession, c: ManagedConnector) => number,
  ): Map<string, number> {
    const left = this.limitsLeft(connectors, active);
    for (const s of active) {
      const c = connectors.get(key(s.chargerId, s.connectorId)) as ManagedConnector;
      const w = counted(s, c);
      for (const node of c.path) left.set(node, (left.get(node) ?? 0) - w);
    }
    const busy = new Set(active.map((s) => key(s.chargerId, s.connectorId)));
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
   * Lifts a profile that a charger now counted at its maximum accepted before; not tried again
   * when it is not accepted (a refusing charger's answers say little).
   */
  private async lift(s: ActiveSession, c: ManagedConnector, watts: number): Promise<void> {
    if (!(await this.send(s, c, watts))) {
      this.confirmed.delete(s.sessionId);
      this.allowances.set(s.sessionId, null, this.now());
    }
  }

  /** Sends one connector's TxDefaultProfile; true when the charger accepted it. */
  private async sendDefault(c: ManagedConnector, watts: number): Promise<boolean> {
    const k = key(c.chargerId, c.connectorId);
    const outcome = await this.limit(c.chargerId, c.connectorId, {
      watts,
      ...(c.phases ? { phases: c.phases } : {}),
    });
    if (outcome === 'accepted') {
      this.defaults.set(k, watts);
      return true;
    }
    // Not answered: it still counts at the default it accepted before (the higher one, on a lower).
    if (outcome === 'rejected' || outcome === 'not_supported') {
      this.defaults.delete(k);
      this.refused(c.chargerId, outcome);
    }
    return false;
  }

  /** Sends one TxProfile; true when the charger accepted it. */
  private async send(s: ActiveSession, c: ManagedConnector, watts: number): Promise<boolean> {
    const outcome = await this.limit(s.chargerId, s.connectorId, {
      watts,
      transactionRef: s.transactionRef,
      ...(c.phases ? { phases: c.phases } : {}),
    });
    if (outcome === 'accepted') {
      this.confirmed.set(s.sessionId, watts);
      this.unsure.delete(s.sessionId);
      this.allowances.set(s.sessionId, watts, this.now());
      for (const changed of this.allowanceChanged) changed(s.sessionId);
      return true;
    }
    // A charger that took its connectors' default profile does smart charging: a refused TxProfile
    // is about the transaction (its id not yet known there, say), tried again; one that took
    // neither refuses profiles altogether.
    const takesDefaults = this.o
      .connectors()
      .some(
        (x) => x.chargerId === s.chargerId && this.defaults.has(key(x.chargerId, x.connectorId)),
      );
    if (outcome === 'not_supported' || (outcome === 'rejected' && !takesDefaults)) {
      this.refused(s.chargerId, outcome);
    }
    return false;
  }

  private async limit(
    chargerId: string,
    connectorId: string,
    limit: { watts: number; transactionRef?: string; phases?: 1 | 3 },
  ): Promise<StepOutcome | 'failed'> {
    try {
      return await this.o.chargers.setPowerLimit(chargerId, connectorId, limit);
    } catch (err) {
      this.o.log.warn(
        { chargerId, connectorId, watts: limit.watts, err: (err as Error).message },
        'power limit not delivered: the connector keeps counting at its previous allowance',
      );
      return 'failed';
    }
  }

  private refused(chargerId: string, outcome: string): void {
    if (this.refusing.has(chargerId)) return;
    this.refusing.add(chargerId);
    this.o.counters?.refusal(chargerId);
    this.o.log.warn(
      { chargerId, outcome },
      'charger refuses charging profiles: counted at its maximum, the others share the rest',
    );
    this.again ??= 'profile_refused';
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
        sessionId: key(c.chargerId, c.connectorId),
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

  /**
   * A charger that connected, reconnected or booted forgets nothing we know but may have lost
   * its profiles: it gets its connectors' safe default and its sessions' allowances again.
   */
  chargerUp(chargerId: string, reason: string): void {
    if (this.closed) return;
    const hadRefused = this.refusing.delete(chargerId);
    for (const id of [...this.confirmed.keys()]) {
      if (this.o.active().some((s) => s.sessionId === id && s.chargerId === chargerId)) {
        this.unsure.add(id);
        // Its readings from now until its profile is accepted again are not judged; the ones it
        // queued while offline still are, against the profile it held then.
        this.allowances.set(id, null, this.now());
      }
    }
    // A busy connector's default matters after its session (its end's round sets it to what is
    // left); an idle one's is what the sessions leave, each counted at the higher of what it may
    // draw now and what it was last allocated.
    const allBusy = this.safeDefaults();
    const connectors = this.connectorMap();
    const active = this.o.active().filter((s) => connectors.has(key(s.chargerId, s.connectorId)));
    const idle = this.defaultTargets(connectors, active, (s, c) => {
      const a = this.allocation.get(s.sessionId);
      return Math.max(typeof a === 'number' ? a : 0, this.currentAllowance(s, c));
    });
    const mine = [...connectors.values()].filter((c) => c.chargerId === chargerId);
    void (async () => {
      await Promise.all(
        mine.map(async (c) => {
          const k = key(c.chargerId, c.connectorId);
          const watts = idle.get(k) ?? allBusy.get(k) ?? 0;
          const outcome = await this.limit(c.chargerId, c.connectorId, {
            watts,
            ...(c.phases ? { phases: c.phases } : {}),
          });
          if (outcome === 'accepted') this.defaults.set(k, watts);
          else {
            this.defaults.delete(k);
            if (outcome === 'rejected' || outcome === 'not_supported')
              this.refused(chargerId, outcome);
          }
        }),
      );
      await this.reallocate(hadRefused ? `${reason}_retry` : reason);
    })();
  }

  /**
   * Live power readings: per connector for the site view (the latest measured); a departure
   * reallocates. Each is judged at the time it was measured, against the allowances that may
   * have held then (history/ramp: `AllowanceHistory`), never against one accepted after it.
   */
  sampled(sample: MeterSample): void {
    if (!sample.live || sample.powerW === null) return;
    const k = key(sample.chargerId, sample.connectorId);
    const latest = this.measured.get(k);
    if (!latest || latest.atMs <= sample.time.measuredAtMs)
      this.measured.set(k, { watts: sample.powerW, atMs: sample.time.measuredAtMs });
    if (sample.transactionRef === null) return;
    const s = this.o
      .active()
      .find((a) => a.chargerId === sample.chargerId && a.transactionRef === sample.transactionRef);
    if (!s) return;
    const band = this.allowances.band(s.sessionId, sample.time.measuredAtMs);
    if (!band) return;
    const marginOf = (w: number) => Math.max(DEPARTURE_MIN_W, w * DEPARTURE_FRACTION);
    const over = sample.powerW > band.high + marginOf(band.high);
    const under = sample.powerW < band.low - marginOf(band.low);
    if (!under) this.underDraw.delete(s.sessionId);
    if (!over) this.overDraw.delete(s.sessionId);
    if (over) {
      // Past every allowance that held then on two readings in a row: it does not obey; counted
      // at its maximum from now on.
      if (!this.overDraw.has(s.sessionId)) {
        this.overDraw.add(s.sessionId);
        return;
      }
      this.overDraw.delete(s.sessionId);
      this.o.log.warn(
        {
          sessionId: s.sessionId,
          measuredW: sample.powerW,
          allowedW: band.high,
          measuredAt: new Date(sample.time.measuredAtMs).toISOString(),
        },
        'charger draws past its charging profile',
      );
      this.refused(s.chargerId, 'overdraw');
      void this.reallocate('overdraw');
    } else if (under && this.drawCap.get(s.sessionId) === undefined) {
      // The EV takes less than it may (taper, full battery): the rest goes to the others, once
      // two readings in a row agree (an EV still ramping up is not held at its first reading).
      const margin = marginOf(band.low);
      const previous = this.underDraw.get(s.sessionId);
      this.underDraw.set(s.sessionId, sample.powerW);
      if (previous === undefined || Math.abs(previous - sample.powerW) > margin) return;
      this.underDraw.delete(s.sessionId);
      this.drawCap.set(s.sessionId, Math.ceil(sample.powerW + margin));
      void this.reallocate('under_draw');
    } else if (
      this.drawCap.get(s.sessionId) !== undefined &&
      sample.powerW >= band.at - marginOf(band.at) / 2 &&
      band.at >= (this.drawCap.get(s.sessionId) ?? 0)
    ) {
      // It rose to its cap: it may want more again.
      this.drawCap.delete(s.sessionId);
      void this.reallocate('draw_rising');
    }
  }
}
