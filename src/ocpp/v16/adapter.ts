import type { ChargerSettings, CommandOutcome } from '../port.js';
import { outcomeOf } from '../operator-call.js';
import type { AdapterContext, OperatorCalls, ProtocolSession } from '../protocol-session.js';
import { changeConfiguration, settingTaken } from './calls/change-configuration.js';
import { operatorCalls16 } from './calls/operator.js';
import { remoteStartTransaction } from './calls/remote-start-transaction.js';
import { remoteStopTransaction } from './calls/remote-stop-transaction.js';
import { normalize16, type Requests16 } from './normalize.js';
import { ROUTES16 } from './routes.js';
import type { Handler16, Session16 } from './session-context.js';
import { Transactions16 } from './transactions.js';

/** Measurands the gateway needs: the register for settlement, power for the stop prediction, SoC for quotes. */
const SAMPLED_DATA = 'Energy.Active.Import.Register,Power.Active.Import,SoC';

/** Speaks OCPP 1.6J with one connected charge point. */
export class V16Session implements ProtocolSession {
  private readonly session: Session16;
  readonly operator: OperatorCalls;

  constructor(ctx: AdapterContext) {
    this.session = {
      ctx,
      transactions: new Transactions16(ctx.db),
      now: () => new Date(ctx.clock.now()).toISOString(),
      connectorIdOf: (ocppConnectorId) =>
        ctx.site.connectorByOcppId(ctx.chargerId, ocppConnectorId)?.id,
    };
    this.operator = operatorCalls16(this.session);
    for (const action of Object.keys(ROUTES16) as (keyof Requests16)[]) {
      const handler = ROUTES16[action] as Handler16;
      ctx.rpc.handle(action, ({ params }) => handler(this.session, normalize16(action, params)));
    }
  }

  requestStart(connectorId: string, idToken: string): Promise<CommandOutcome> {
    return remoteStartTransaction(this.session, connectorId, idToken);
  }

  async requestStop(transactionRef: string): Promise<CommandOutcome> {
    return outcomeOf(await remoteStopTransaction(this.session, transactionRef));
  }

  /**
   * Asks for the meter data the gateway needs, at the interval it can work with, and aligns the
   * charger's wait for the EV (ConnectionTimeOut) with the session start timeout.
   */
  async configure(settings: ChargerSettings): Promise<string[]> {
    const wanted: [string, string][] = [
      ['MeterValueSampleInterval', String(settings.meterSampleIntervalSeconds)],
      ['MeterValuesSampledData', SAMPLED_DATA],
      ['ConnectionTimeOut', String(settings.connectionTimeoutSeconds)],
    ];
    const refused: string[] = [];
    for (const [key, value] of wanted) {
      if (!settingTaken(await changeConfiguration(this.session, key, value))) refused.push(key);
    }
    return refused;
  }
}
