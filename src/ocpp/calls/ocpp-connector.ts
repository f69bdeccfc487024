import type { SiteDirectory } from '../../config/site.js';
import type { AdapterContext } from '../protocol-adapter.js';

/** The OCPP number of a configured connector (1.6 connectorId, 2.0.1 evseId). */
export function ocppNumber(site: SiteDirectory, chargerId: string, connectorId: string): number {
  const connector = site.connector(chargerId, connectorId);
  if (!connector) throw new Error(`connector ${connectorId} is not configured on ${chargerId}`);
  return connector.ocppConnectorId;
}

/** The OCPP number of a configured connector of the adapter's charger. */
export const ocppConnectorId = (ctx: AdapterContext, connectorId: string): number =>
  ocppNumber(ctx.site, ctx.chargerId, connectorId);

/**
 * The id of the zero-power profile the stop ladder sets on a connector: one per connector, so a
 * second one replaces the first; a TxProfile ends with its transaction on both versions.
 */
export const zeroPowerProfileId = (ocppId: number) => 90_000 + ocppId;

/**
 * The ids of the load manager's ceiling profiles on a connector: one TxDefaultProfile and one
 * TxProfile each, apart from each other and from the zero profile, so a new ceiling replaces the
 * old one of its kind and a Tx ceiling never removes the default the next transaction starts under.
 */
export const ceilingProfileId = (ocppId: number, onTransaction: boolean) =>
  (onTransaction ? 80_000 : 70_000) + ocppId;

/**
 * Stack levels: among TxProfiles the highest level wins, so the paid-energy stop's zero profile
 * sits above the load manager's ceiling and a later ceiling can never lift a stop.
 */
export const CEILING_STACK_LEVEL = 0;
export const ZERO_POWER_STACK_LEVEL = 1;
