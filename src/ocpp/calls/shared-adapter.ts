import type { AdapterContext } from '../protocol-adapter.js';
import type {
  ChargerReply,
  CommandOutcome,
  PowerLimit,
  PowerLimitOutcome,
  StepOutcome,
} from '../port.js';
import { ocppConnectorId } from './ocpp-connector.js';
import { outcomeOf } from './operator-call.js';
import { ceilingFor, type Ceiling, type RateUnit } from './power-limit.js';
import { stepOf } from './step-outcome.js';

/** One version's own messages for the port calls both adapters make alike. */
export interface VersionMessages<C> {
  requestStart(conn: C, connectorId: string, idToken: string): Promise<CommandOutcome>;
  requestStop(conn: C, transactionRef: string): Promise<ChargerReply>;
  setZeroProfile(conn: C, connectorId: string, transactionRef: string): Promise<StepOutcome>;
  setCeilingProfile(
    conn: C,
    connectorId: string,
    transactionRef: string | undefined,
    ceiling: Ceiling,
  ): Promise<StepOutcome>;
  clearCeilingProfile(conn: C, connectorId: string, onTransaction: boolean): Promise<StepOutcome>;
  changeAvailability(conn: C, ocppId: number, operative: boolean): Promise<ChargerReply>;
  unlockConnector(conn: C, ocppId: number): Promise<ChargerReply>;
}

/**
 * What both adapters do alike around their own messages: start and stop, the zero and ceiling
 * profiles, availability and unlock, each answer judged the same way. Each version's messages
 * and everything it does its own way stay in its adapter.
 */
export abstract class SharedAdapter<C extends { ctx: AdapterContext }> {
  /** The units the charger said its schedules take, read at configure time; null: not said. */
  protected rateUnits: ReadonlySet<RateUnit> | null = null;

  protected constructor(
    protected readonly conn: C,
    private readonly messages: VersionMessages<C>,
  ) {}

  requestStart(connectorId: string, idToken: string): Promise<CommandOutcome> {
    return this.messages.requestStart(this.conn, connectorId, idToken);
  }

  async requestStop(transactionRef: string): Promise<CommandOutcome> {
    return outcomeOf(await this.messages.requestStop(this.conn, transactionRef));
  }

  limitToZero(connectorId: string, transactionRef: string): Promise<StepOutcome> {
    return this.messages.setZeroProfile(this.conn, connectorId, transactionRef);
  }

  /**
   * Whether the charger runs the transaction on the connector as far as its messages told: started
   * there and not ended (this version's transaction table).
   */
  protected abstract runsTransaction(connectorId: string, transactionRef: string): boolean;

  /**
   * A TxProfile goes out only with the transaction it belongs to, running on its connector: a
   * charger refuses one for a transaction it does not run there (a stop that crossed the round, a
   * transaction ended or replaced), so none is sent ('no_transaction'); the connector's
   * TxDefaultProfile holds whatever starts there.
   */
  async setPowerLimit(connectorId: string, limit: PowerLimit): Promise<PowerLimitOutcome> {
    const onTransaction = limit.transactionRef !== undefined;
    if (limit.watts === null) {
      return this.messages.clearCeilingProfile(this.conn, connectorId, onTransaction);
    }
    if (
      limit.transactionRef !== undefined &&
      !this.runsTransaction(connectorId, limit.transactionRef)
    )
      return 'no_transaction';
    const { ctx } = this.conn;
    const ceiling = ceilingFor(ctx, this.rateUnits, connectorId, limit.watts, limit.phases);
    return this.messages.setCeilingProfile(this.conn, connectorId, limit.transactionRef, ceiling);
  }

  /** Scheduled (the charger applies it when the transaction ends) counts as accepted. */
  async setAvailability(connectorId: string, operative: boolean): Promise<StepOutcome> {
    const id = ocppConnectorId(this.conn.ctx, connectorId);
    const reply = await this.messages.changeAvailability(this.conn, id, operative);
    return stepOf(reply, ['Accepted', 'Scheduled']);
  }

  async unlockConnector(connectorId: string): Promise<StepOutcome> {
    const id = ocppConnectorId(this.conn.ctx, connectorId);
    return stepOf(await this.messages.unlockConnector(this.conn, id), ['Unlocked']);
  }
}
