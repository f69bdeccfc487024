import type { IntervalEnergy } from '../metering/interval-energy.js';
import type { AdapterContext } from '../protocol-adapter.js';
import type { Screen16 } from './screen.js';
import type { Transactions16 } from './transactions.js';

/** What every 1.6 handler and outgoing call is given for the charger it serves. */
export interface ConnectionContext16 {
  ctx: AdapterContext;
  transactions: Transactions16;
  intervals: IntervalEnergy;
  /** What the driver is told at the charger's screen (cost-and-price messages). */
  screen: Screen16;
  /** Our clock as an ISO timestamp. */
  now(): string;
  /** The site's connector id for an OCPP connector number, if configured. */
  connectorIdOf(ocppConnectorId: number): string | undefined;
}

/** Answers one incoming OCPP 1.6 call; `req` has been through normalize.ts. */
export type Handler16<Req = unknown> = (conn: ConnectionContext16, req: Req) => unknown;
