import { allocate } from './allocator.js';
import {
  connectorKey,
  type LoadManagerOptions,
  type NodeView,
  type SessionAllocationView,
  type SessionPower,
} from './power-model.js';
import type { PowerState } from './power-state.js';

/** What the site's power looks like to the driver's session read, a quote and the operator. */
export class PowerReads {
  constructor(
    private readonly state: PowerState,
    private readonly o: LoadManagerOptions,
  ) {}

  /**
   * What the session's charger is allowed now (the driver's read), or null when the session is
   * not under load management: its accepted profile (else its connector's default, else its
   * maximum), never a value still in flight or held back, so a session held at 0 W reads as
   * waiting even while its allocation already says otherwise.
   */
  sessionPower(sessionId: string): SessionPower | null {
    if (!this.state.allocation.has(sessionId)) return null;
    const s = this.o.active().find((a) => a.sessionId === sessionId);
    const c = s && this.state.connectorMap().get(connectorKey(s.chargerId, s.connectorId));
    if (!s || !c) return null;
    const allowedW = this.state.currentAllowance(s, c);
    return { allocatedW: allowedW, waiting: allowedW === 0 };
  }

  /** The allocation last computed for the session (the operator's view), or null. */
  private allocated(sessionId: string): SessionPower | null {
    const a = this.state.allocation.get(sessionId);
    if (a === undefined) return null;
    return a === 'waiting' ? { allocatedW: 0, waiting: true } : { allocatedW: a, waiting: false };
  }

  /**
   * What the session's charger has accepted as its ceiling, W (null when none is in force): the
   * stop prediction plans with it only once the charger took it, never on a value still in flight.
   */
  confirmedPowerW(sessionId: string): number | null {
    return this.state.unsure.has(sessionId) ? null : (this.state.confirmed.get(sessionId) ?? null);
  }

  /**
   * What a session started now on this connector would be allocated (W), the sessions drawing
   * now and their chargers as they are: null when it would wait or the connector is not managed.
   */
  powerIfStarted(chargerId: string, connectorId: string, owedWh: number): number | null {
    const connectors = this.state.connectorMap();
    const c = connectors.get(connectorKey(chargerId, connectorId));
    if (!c) return null;
    const probe = '\u0000quote';
    const inputs = [
      ...this.state.inputs(connectors),
      {
        sessionId: probe,
        path: c.path,
        minW: c.minW,
        maxW: c.maxW,
        owedWh,
        acceptsProfiles: !this.state.refusing.has(chargerId),
        startOrder: Number.MAX_SAFE_INTEGER,
      },
    ];
    const a = allocate(this.state.limitsLeft(connectors), inputs, this.o.policy).get(probe);
    return typeof a === 'number' && a > 0 ? a : null;
  }

  /** Every node's limit, allowance and measured power, and every session's allocation. */
  view(): { nodes: NodeView[]; sessions: SessionAllocationView[] } {
    const connectors = this.state.connectorMap();
    const active = this.o.active();
    const sessions = active.map((s): SessionAllocationView => {
      const power = this.allocated(s.sessionId) ?? { allocatedW: 0, waiting: false };
      return {
        sessionId: s.sessionId,
        chargerId: s.chargerId,
        connectorId: s.connectorId,
        ...power,
        confirmedW: this.confirmedPowerW(s.sessionId),
        refusesProfiles: this.state.refusing.has(s.chargerId),
        measuredW: this.state.measured.get(connectorKey(s.chargerId, s.connectorId))?.watts ?? null,
      };
    });
    const nodes = this.o.nodeIds.map((nodeId): NodeView => {
      const on = (c: { chargerId: string; connectorId: string }): boolean =>
        connectors.get(connectorKey(c.chargerId, c.connectorId))?.path.includes(nodeId) ?? false;
      return {
        ...this.o.limits.limit(nodeId),
        allocatedW: sessions.filter(on).reduce((sum, s) => sum + s.allocatedW, 0),
        measuredW: [...connectors.values()]
          .filter(on)
          .reduce(
            (sum, c) =>
              sum + (this.state.measured.get(connectorKey(c.chargerId, c.connectorId))?.watts ?? 0),
            0,
          ),
      };
    });
    return { nodes, sessions };
  }
}
