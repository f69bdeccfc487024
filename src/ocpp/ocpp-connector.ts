import type { AdapterContext } from './protocol-session.js';

/** The OCPP number of a configured connector (1.6 connectorId, 2.0.1 evseId). */
export function ocppConnectorId(ctx: AdapterContext, connectorId: string): number {
  const connector = ctx.site.connector(ctx.chargerId, connectorId);
  if (!connector) throw new Error(`connector ${connectorId} is not configured on ${ctx.chargerId}`);
  return connector.ocppConnectorId;
}

/**
 * The id of the zero-power profile the stop ladder sets on a connector: one per connector, so a
 * second one replaces the first; a TxProfile ends with its transaction on both versions.
 */
export const zeroPowerProfileId = (ocppId: number) => 90_000 + ocppId;
