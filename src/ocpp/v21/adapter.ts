import type { AdapterContext } from '../protocol-adapter.js';
import { Adapter201 } from '../v201/adapter.js';
import { ROUTES21 } from './routes.js';

/**
 * Speaks OCPP 2.1 with one connected charging station. 2.1 is 2.0.1's successor with the same
 * message model (device model, TransactionEvent, EVSE ids): this adapter is the 2.0.1 adapter
 * with 2.1's schemas at the edge and what 2.1 changed or added.
 */
export class Adapter21 extends Adapter201 {
  constructor(ctx: AdapterContext) {
    super(ctx, ROUTES21);
  }
}
