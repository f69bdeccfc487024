import type { AdapterContext } from '../protocol-adapter.js';
import type { Screen201 } from './screen.js';
import type { TransactionEvents201 } from './transaction-events.js';
import type { Transactions201 } from './transactions.js';

/** What every 2.0.1 handler and outgoing call is given for the station it serves. */
export interface ConnectionContext201 {
  ctx: AdapterContext;
  txs: Transactions201;
  transactionEvents: TransactionEvents201;
  /** What the driver is told at the station's screen. */
  screen: Screen201;
  /** Our clock as an ISO timestamp. */
  now(): string;
  /** The site's connector id for an EVSE id, if configured. */
  connectorIdOf(evseId: number): string | undefined;
}

/** Answers one incoming OCPP 2.0.1 call; `req` has been through normalize.ts. */
export type Handler201<Req = unknown> = (conn: ConnectionContext201, req: Req) => unknown;
