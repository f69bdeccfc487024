import { callOutcome } from '../../connection/rpc.js';
import type { ConnectionContext201 } from '../connection-context.js';

export interface TransactionStatus {
  /** Absent when the station does not know the transaction at all. */
  ongoingIndicator?: boolean;
  messagesInQueue: boolean;
}

/** null: the station answered with a CALLERROR (it does not implement the message). */
export async function getTransactionStatus(
  { ctx }: ConnectionContext201,
  transactionRef: string,
): Promise<TransactionStatus | null> {
  const reply = await callOutcome(
    ctx.rpc,
    'GetTransactionStatus',
    { transactionId: transactionRef },
    ctx.callTimeoutMs,
  );
  if (reply === null || typeof reply !== 'object') return null;
  const r = reply as Partial<TransactionStatus>;
  return {
    messagesInQueue: r.messagesInQueue === true,
    ...(typeof r.ongoingIndicator === 'boolean' && { ongoingIndicator: r.ongoingIndicator }),
  };
}
