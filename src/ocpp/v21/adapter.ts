import type { ChargerSettings, StepOutcome, TransactionLimit } from '../port.js';
import type { AdapterContext, Configured, LocalAuthCalls } from '../protocol-adapter.js';
import { Adapter201 } from '../v201/adapter.js';
import { localAuthorization201 } from '../v201/local-authorization.js';
import { ROUTES21 } from './routes.js';
import { TransactionLimits21 } from './transaction-limit.js';

/** 2.1 IdTokenType.idToken is identifierString(255) (2.0.1: 36). */
const ID_TOKEN_LENGTH_21 = 255;

/**
 * Speaks OCPP 2.1 with one connected charging station. 2.1 is 2.0.1's successor with the same
 * message model (device model, TransactionEvent, EVSE ids): this adapter is the 2.0.1 adapter
 * with 2.1's schemas at the edge and what 2.1 changed or added. Every frame the 2.0.1 calls send
 * is valid 2.1 as it is (test/ocpp21-central-system.test.ts checks each against 2.1's schemas).
 */
export class Adapter21 extends Adapter201 {
  /** The paid limit and tariff the station holds itself (transaction-limit.ts). */
  private readonly limits: TransactionLimits21;

  constructor(ctx: AdapterContext) {
    super(ctx, ROUTES21);
    this.limits = new TransactionLimits21(this.conn);
    this.conn.transactionEvents.extend(this.limits);
  }

  override async configure(settings: ChargerSettings): Promise<Configured> {
    const configured = await super.configure(settings);
    await this.limits.configure();
    return configured;
  }

  setTransactionLimit(transactionRef: string, limit: TransactionLimit): Promise<StepOutcome> {
    return this.limits.set(transactionRef, limit);
  }

  /** 2.0.1's local list and cache, with 2.1's longer tokens sayable in the list. */
  override get localAuth(): LocalAuthCalls {
    return localAuthorization201(this.conn, ID_TOKEN_LENGTH_21);
  }
}
