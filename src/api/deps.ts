import type { ApiKeys } from '../auth/api-keys.js';
import type { DriverTokens } from '../auth/driver-tokens.js';
import type { Charging } from '../charging/charging.js';
import type { SessionPowerView, SessionViews } from '../charging/session-view.js';
import type { Roster } from '../fleet/roster.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { TlsMaterial } from '../shared/tls-files.js';

/** All a load balancer or a container check needs; details are on the operator API. */
export interface Liveness {
  status: 'ok' | 'degraded';
  version: string;
}

export interface ApiDeps {
  log: Logger;
  clock: Clock;
  /** Serve over HTTPS with this certificate. */
  tls: TlsMaterial | undefined;
  rateLimits: { mintPerMinute: number; driverPerMinute: number };
  bodyLimitBytes: number;
  maxAmount: number;
  apiKeys: ApiKeys;
  driverTokens: DriverTokens;
  roster: Roster;
  charging: Charging;
  sessionViews: SessionViews;
  /** A drawing session's allowance under site load management; null when none applies. */
  sessionPower?: (sessionId: string) => SessionPowerView | null;
  /** Under site load management: what a session started now on this connector would get, W. */
  quotePower?: (chargerId: string, connectorId: string, energyWh: number) => number | null;
  /** What /healthz tells anyone: alive, and whether something needs an operator's look. */
  liveness: () => Liveness;
  /** What keeps the gateway from taking work (empty: ready), for /readyz. */
  readiness: () => string[];
}
