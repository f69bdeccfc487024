import { relaxed } from '../../../store/durability.js';
import type { CommandOutcome } from '../../port.js';
import { callOutcome } from '../../connection/rpc.js';
import type { RequestStartStopConf } from '../messages.js';
import type { ConnectionContext201 } from '../connection-context.js';

export async function requestStartTransaction(
  { ctx, txs, transactionEvents, now }: ConnectionContext201,
  connectorId: string,
  idToken: string,
): Promise<CommandOutcome> {
  const connector = ctx.site.connector(ctx.chargerId, connectorId);
  if (!connector) throw new Error(`connector ${connectorId} is not configured on ${ctx.chargerId}`);
  const evseId = connector.ocppConnectorId;
  // Relaxed (store/durability.ts): the row only lets an event that names our remoteStartId but not
  // our token find the session. A power cut that loses it also loses the 'authorized' mark after
  // it (the WAL is a log): the session is left `authorizing`, waits for the charger to name the
  // token and is refunded in full otherwise, as any Start whose answer recovery cannot prove.
  const remoteStartId = relaxed(ctx.db, () =>
    txs.newRemoteStart(ctx.chargerId, evseId, idToken, now()),
  );
  const reply = (await callOutcome(
    ctx.rpc,
    'RequestStartTransaction',
    { evseId, remoteStartId, idToken: { idToken, type: 'Central' } },
    ctx.callTimeoutMs,
  )) as RequestStartStopConf | null;
  if (reply?.status !== 'Accepted') return 'rejected';
  if (reply.transactionId) transactionEvents.adopt(reply.transactionId, evseId, idToken);
  return 'accepted';
}
