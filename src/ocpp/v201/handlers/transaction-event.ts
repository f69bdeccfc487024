import type { TransactionEventReq } from '../messages.js';
import type { Session201 } from '../connection-context.js';

export function transactionEvent({ transactionEvents }: Session201, req: TransactionEventReq) {
  return transactionEvents.handle(req);
}
