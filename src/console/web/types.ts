// The shapes the console reads from /admin/v1 and /console/session (docs/operator-api.md,
// docs/console.md). The gateway validates what it sends against its response schemas; the console
// trusts them as the API's contract.

export type Role = 'viewer' | 'operator';

export interface Operator {
  id: string;
  name: string;
  role: Role;
}

export interface Login {
  operator: Operator;
  csrfToken: string;
  /** The site's IANA time zone: every time is shown in it. */
  timeZone?: string;
}

export interface Status {
  siteId: string;
  chargers: number;
  chargersOnline: number;
  openSessions: number;
  outboxDepth: number;
}

export interface OutOfService {
  by: string;
  reason: string | null;
  at: string;
}

export interface ConnectorView {
  connectorId: string;
  status: string;
  errorCode: string | null;
  /** Who took it out of service, why and when (absent from a gateway that does not say). */
  outOfService?: OutOfService | null;
  socPercent: number | null;
  session: { sessionId: string; driverId: string; state: string; fleetId?: string } | null;
  powerW: number | null;
  energyWh: number | null;
  meterAt: string | null;
}

export interface ChargerView {
  chargerId: string;
  connected: boolean;
  securityProfile: number;
  protocol: string | null;
  vendor: string | null;
  model: string | null;
  serialNumber: string | null;
  firmwareVersion: string | null;
  bootedAt: string | null;
  lastSeenAt: string | null;
  deviations: { source: string; count: number; kinds: DeviationKind[] };
  outOfService?: OutOfService | null;
  connectors: ConnectorView[];
  recentEvents?: { seq: number; action: string; note: string | null; at: string }[];
  /** The last OCPP messages with the charger, either way (never their payloads). */
  recentCalls?: {
    at: string;
    action: string;
    direction: 'in' | 'out';
    outcome: 'ok' | 'error' | 'timeout';
    seconds: number;
  }[];
}

export interface DeviationKind {
  kind: string;
  count: number;
  firstSeenAt?: string;
  lastSeenAt?: string;
}

export interface SessionRow {
  sessionId: string;
  driverId: string;
  fleetId: string;
  chargerId: string;
  connectorId: string;
  state: string;
  amount: number;
  pricePerKwh: number;
  paidEnergyWh: number;
  energyWh: number;
  cost: number;
  credited: number;
  endReason: string | null;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  /** How it started: the app, or a tap of a card or vehicle (its token masked). */
  origin: 'app' | 'card' | 'vehicle';
  token: string | null;
  startedOffline: boolean;
}

export interface MeterSample {
  energyWh: number | null;
  powerW: number | null;
  socPercent: number | null;
  timestamp: string;
}

export interface SessionDetail {
  session: SessionRow;
  /** Where its price (fixed at Start) came from; null for sessions from before tariff versions. */
  tariff?: { id: string; version: number; window: string | null } | null;
  ledger: LedgerEntry[];
  transaction: { meterStartWh: number | null; meterStopWh: number | null } | null;
  meterSamples: MeterSample[];
  /** The session's own energy (from its start reading), power and SoC over time. */
  meterSeries?: {
    at: string;
    energyWh: number | null;
    powerW: number | null;
    socPercent: number | null;
  }[];
  loss?: LossSession | null;
  /**
   * Who stopped it (an operator, the station's own limit, the paid energy, the driver, the EV, the
   * charger, the gateway); `line`: as kept at settlement.
   */
  stoppedBy?: {
    by: string;
    operatorId: string | null;
    words: string;
    line?: string | null;
    gapWh?: number | null;
  } | null;
  /** What an OCPP 2.1 station held of its limit, and its own costs that differed (docs/money.md). */
  stationChecks?: {
    limit: {
      energyWh: number;
      sentEnergyWh: number | null;
      confirmedEnergyWh: number | null;
      confirmedCostNgn: number | null;
      tariffStatus: string | null;
    } | null;
    costDifferences: { kind: string; energyWh: number; stationNgn: number; gatewayNgn: number }[];
  };
  timeline: { at: string; kind?: string; event: string }[];
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface Fleet {
  fleetId: string;
  name: string;
  drivers: number;
  activeDrivers: number;
  walletTotal: number;
}

export interface Driver {
  driverId: string;
  fleetId: string;
  email: string;
  active: boolean;
  balance: number;
  vehicleModel: string | null;
  openSessionId: string | null;
}

export interface LedgerEntry {
  seq: number;
  id: string;
  driverId: string;
  fleetId: string;
  kind: string;
  amount: number;
  balanceAfter: number;
  createdAt: string;
  sessionId: string | null;
  reference: string | null;
  actor: string | null;
  reason: string | null;
}

export interface LossSession {
  sessionId: string;
  beyondPaidWh: number;
  beyondPaidNgn: number;
}

export interface Losses {
  beyondPaidWh: number;
  beyondPaidNgn: number;
  sessions: LossSession[];
}

export interface ActionAnswer {
  chargerId: string;
  connectorId: string | null;
  status: string;
  accepted: boolean;
  reply: unknown;
}

export interface EnergyFigures {
  sessions: number;
  energyWh: number;
  revenueNgn: number;
}

export interface SiteEnergy {
  timeZone: string;
  today: { from: string; to: string };
  month: { from: string; to: string };
  chargers: { chargerId: string; today: EnergyFigures; month: EnergyFigures }[];
  total: { today: EnergyFigures; month: EnergyFigures };
}

/** What binds a node's power limit (docs/load-management.md, "Changing the limit at run time"). */
export type LimitSource = 'config' | 'schedule' | 'feed' | 'fallback' | 'operator';

/** GET /admin/v1/site/power: each node's limit and load, each drawing session's share. */
export interface SitePower {
  policy: string;
  nodes: {
    nodeId: string;
    limitKw: number;
    source: LimitSource;
    allocatedKw: number;
    measuredKw: number;
  }[];
  sessions: {
    sessionId: string;
    chargerId: string;
    connectorId: string;
    state: 'allocated' | 'waiting' | 'unmanaged';
    allocatedKw: number;
    confirmedKw: number | null;
    measuredKw: number | null;
  }[];
}

/** A node as GET/PUT/DELETE /admin/v1/site/power/limits[/{nodeId}] answer it. */
export interface NodeLimit {
  nodeId: string;
  limitKw: number;
  source: LimitSource;
  contractKw: number;
  constraints: { source: LimitSource; limitKw: number; until: string | null }[];
  override: {
    limitKw: number;
    reason: string;
    expiresAt: string | null;
    setBy: string;
    setAt: string;
  } | null;
}

export interface PowerLimits {
  timeZone: string;
  nodes: NodeLimit[];
}

/** One entry of the operator audit trail (GET /audit). */
export interface AuditEntry {
  seq: number;
  at: string;
  operatorId: string;
  operatorName: string;
  action: string;
  params?: unknown;
  status: number;
  result?: unknown;
}

export interface AuditPage {
  entries: AuditEntry[];
  nextCursor: string | null;
}
