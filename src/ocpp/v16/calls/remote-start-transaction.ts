import type { CommandOutcome } from '../../port.js';
import { callOutcome } from '../../connection/rpc.js';
import type { StatusConf } from '../messages.js';
import type { ConnectionContext16 } from '../connection-context.js';

export async function remoteStartTransaction(
  { ctx }: ConnectionContext16,
  connectorId: string,
  idToken: string,
): Promise<CommandOutcome> {
  const connector = ctx.site.connector(ctx.chargerId, connectorId);
  if (!connector) throw new Error(`connector ${connectorId} is not configured on ${ctx.chargerId}`);
  const reply = (await callOutcome(
    ctx.rpc,
    'RemoteStartTransaction',
    { connectorId: connector.ocppConnectorId, idTag: idToken },
    ctx.callTimeoutMs,
  )) as StatusConf | null;
  return reply?.status === 'Accepted' ? 'accepted' : 'rejected';
}
