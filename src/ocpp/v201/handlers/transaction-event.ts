import type { TransactionEventReq } from '../messages.js';
import type { ConnectionContext201 } from '../connection-context.js';

export function transactionEvent(
  { transactionEvents }: ConnectionContext201,
  req: TransactionEventReq,
) {
  return transactionEvents.handle(req);
}
