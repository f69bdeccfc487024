import type { ChargerCommands } from '../ocpp/port.js';
import type { Logger } from '../shared/log.js';
import type { AllocationPolicy } from './allocator.js';
import type { LimitReader, NodeLimit } from './limits.js';

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

/** A connector's key in the power manager's maps. */
export const connectorKey = (chargerId: string, connectorId: string): string =>
  `${chargerId}\u0000${connectorId}`;
