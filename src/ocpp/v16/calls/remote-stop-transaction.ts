import type { CommandOutcome } from '../../port.js';
import { callOutcome } from '../../rpc.js';
import type { StatusConf } from '../messages.js';
import type { Session16 } from '../session-context.js';

export async function remoteStopTransaction(
  { ctx }: Session16,
  transactionRef: string,
): Promise<CommandOutcome> {
  const reply = (await callOutcome(
    ctx.rpc,
    'RemoteStopTransaction',
    { transactionId: Number(transactionRef) },
    ctx.callTimeoutMs,
  )) as StatusConf | null;
  return reply?.status === 'Accepted' ? 'accepted' : 'rejected';
}
