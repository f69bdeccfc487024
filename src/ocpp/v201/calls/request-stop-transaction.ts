import type { CommandOutcome } from '../../port.js';
import { callOutcome } from '../../rpc.js';
import type { RequestStartStopConf } from '../messages.js';
import type { Session201 } from '../session-context.js';

export async function requestStopTransaction(
  { ctx }: Session201,
  transactionRef: string,
): Promise<CommandOutcome> {
  const reply = (await callOutcome(
    ctx.rpc,
    'RequestStopTransaction',
    { transactionId: transactionRef },
    ctx.callTimeoutMs,
  )) as RequestStartStopConf | null;
  return reply?.status === 'Accepted' ? 'accepted' : 'rejected';
}
