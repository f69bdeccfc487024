import type { ChargerSettings, ScreenNote, ScreenOutcome, TransactionProbe } from '../port.js';
import { SharedAdapter, type VersionMessages } from '../calls/shared-adapter.js';
import { ocppConnectorId } from '../calls/ocpp-connector.js';
import type {
  AdapterContext,
  Configured,
  LocalAuthCalls,
  OperatorCalls,
  ChargerAdapter,
} from '../protocol-adapter.js';
import { localAuthorization201 } from './local-authorization.js';
import { stepOf } from '../calls/step-outcome.js';
import { changeAvailability } from './calls/change-availability.js';
import { getTransactionStatus } from './calls/get-transaction-status.js';
import { operatorCalls201 } from './calls/operator.js';
import { requestStartTransaction } from './calls/request-start-transaction.js';
import { requestStopTransaction } from './calls/request-stop-transaction.js';
import { measurandList } from '../metering/metering.js';
import { readVariables, variableValue } from './calls/get-variables.js';
import { clearCeilingProfile } from './calls/clear-charging-profile.js';
import { parseRateUnits } from '../calls/power-limit.js';
import { setCeilingProfile, setZeroChargingProfile } from './calls/set-charging-profile.js';
import {
  notTaken,
  resultStatus,
  sendSetVariables,
  type VariableSetting,
} from './calls/set-variables.js';
import { measurandGap, samplingGap } from '../metering/sampling-gap.js';
import { settingHeld } from '../charger-state/setting-held.js';
import { triggerMessage } from './calls/trigger-message.js';
import { unlockConnector } from './calls/unlock-connector.js';
import { ROUTES201 } from './routes.js';
import { Screen201 } from './screen.js';
import type { Handler201, ConnectionContext201 } from './connection-context.js';
import { TransactionEvents201 } from './transaction-events.js';
import { Transactions201 } from './transactions.js';

/** Measurands the gateway needs: the register for settlement, power for the stop prediction, SoC for quotes. */
const UPDATED_MEASURANDS = 'Energy.Active.Import.Register,Power.Active.Import,SoC';
const REGISTER = 'Energy.Active.Import.Register';
const CTRLR = 'SampledDataCtrlr';
const UPDATED = 'TxUpdatedMeasurands';
/** The units the station's charging schedules take: A, W or both. */
const RATE_UNIT = 'SmartChargingCtrlr.RateUnit';

/** The calls a station may send, each with its handler: 2.0.1's, or a later version's superset. */
export type Routes201 = Readonly<Record<string, Handler201>>;

/** The 2.0.1 messages for the calls both adapters make alike (calls/shared-adapter.ts). */
const MESSAGES201: VersionMessages<ConnectionContext201> = {
  requestStart: requestStartTransaction,
  requestStop: requestStopTransaction,
  setZeroProfile: setZeroChargingProfile,
  setCeilingProfile,
  clearCeilingProfile,
  changeAvailability,
  unlockConnector,
};

/**
 * Speaks OCPP 2.0.1 with one connected charging station. The API's connectorId is the station's
 * EVSE id (the site config's ocppConnectorId); the gateway never addresses a connector inside an
 * EVSE, so a multi-cable EVSE works as one charging point, as 2.0.1 intends.
 */
export class Adapter201 extends SharedAdapter<ConnectionContext201> implements ChargerAdapter {
  constructor(ctx: AdapterContext, routes: Routes201 = ROUTES201 as Routes201) {
    super(connection201(ctx), MESSAGES201);
    ctx.rpc.serve(methodsOf(routes), ({ method, params }) =>
      (routes[method] as Handler201)(this.conn, params),
    );
  }

  /** Made when the operator calls (rarely): nothing a connection holds until then. */
  get operator(): OperatorCalls {
    return operatorCalls201(this.conn);
  }

  get localAuth(): LocalAuthCalls {
    return localAuthorization201(this.conn);
  }

  protected runsTransaction(connectorId: string, transactionRef: string): boolean {
    const evseId = ocppConnectorId(this.conn.ctx, connectorId);
    return this.conn.txs.openOn(this.conn.ctx.chargerId, evseId)?.transactionId === transactionRef;
  }

  prepareScreen(): void {
    this.conn.screen.prepare();
  }

  showOnScreen(note: ScreenNote): Promise<ScreenOutcome> {
    return this.conn.screen.show(note);
  }

  /**
   * GetTransactionStatus: not ongoing with nothing queued is a transaction the station has ended
   * or forgotten (a reboot); ongoing, it is asked for a fresh TransactionEvent. A station without
   * the message is asked for the EVSE's status instead.
   */
  async probeTransaction(connectorId: string, transactionRef: string): Promise<TransactionProbe> {
    const id = ocppConnectorId(this.conn.ctx, connectorId);
    const status = await getTransactionStatus(this.conn, transactionRef);
    if (status === null) {
      const asked = stepOf(await triggerMessage(this.conn, id, 'StatusNotification'));
      return asked === 'accepted' ? 'asked' : 'unknown';
    }
    if (status.ongoingIndicator === false && !status.messagesInQueue) return 'ended';
    if (status.ongoingIndicator !== true) return 'unknown';
    await triggerMessage(this.conn, id, 'TransactionEvent');
    return 'ongoing';
  }

  /**
   * Device-model variables: meter samples during a transaction at the interval the paid-energy
   * stop needs, the register at its start and end (settlement), the wait for the EV after a
   * remote start (the gateway's start timeout less a margin), and a transaction the gateway
   * answers Invalid ended by the station itself. They are read first and only those the station
   * does not already hold are set: a station reconnecting (a network drop, a gateway restart,
   * hundreds at once in a reconnect storm) costs one round trip. A station that refuses the
   * measurand list is asked for the register alone; when the list or the sample interval was set,
   * what the station holds is read back and recorded. The units its charging schedules take come
   * from the first read (the load manager's ceilings).
   */
  async configure(settings: ChargerSettings): Promise<Configured> {
    const wanted: VariableSetting[] = [
      [CTRLR, 'TxUpdatedInterval', String(settings.meterSampleIntervalSeconds)],
      [CTRLR, UPDATED, UPDATED_MEASURANDS],
      [CTRLR, 'TxStartedMeasurands', REGISTER],
      [CTRLR, 'TxEndedMeasurands', REGISTER],
      ['TxCtrlr', 'EVConnectionTimeOut', String(settings.connectionTimeoutSeconds)],
      ['TxCtrlr', 'StopTxOnInvalidId', 'true'],
    ];
    const updated = `${CTRLR}.${UPDATED}`;
    const interval = `${CTRLR}.TxUpdatedInterval`;
    const held = await readVariables(this.conn, [
      ...wanted.map(([c, v]) => `${c}.${v}`),
      RATE_UNIT,
    ]);
    this.rateUnits = parseRateUnits(variableValue(held, RATE_UNIT));
    const missing = wanted.filter(
      ([c, v, value]) => !settingHeld(variableValue(held, `${c}.${v}`), value),
    );
    const isSet = (name: string) => missing.some(([c, v]) => `${c}.${v}` === name);
    const reply = missing.length === 0 ? null : await sendSetVariables(this.conn, missing);
    const refused = reply === null ? [] : notTaken(missing, reply);
    const intervalAnswer = reply !== null && isSet(interval) ? resultStatus(reply, interval) : null;
    const before = variableValue(held, updated);
    let measurands = before;
    let measurandsAnswer = reply !== null && isSet(updated) ? resultStatus(reply, updated) : null;
    if (isSet(updated)) {
      measurands = refused.includes(updated) ? null : UPDATED_MEASURANDS;
      if (measurands === null) {
        const again = await sendSetVariables(this.conn, [[CTRLR, UPDATED, REGISTER]]);
        const taken = notTaken([[CTRLR, UPDATED, REGISTER]], again).length === 0;
        this.conn.ctx.reports.noted(
          'SetVariables',
          taken ? 'measurand list refused: register alone taken' : 'measurand list refused',
          { variable: updated },
        );
        if (taken) {
          measurands = REGISTER;
          measurandsAnswer = resultStatus(again, updated);
        }
      }
    }
    let intervalHeld = variableValue(held, interval);
    if (isSet(updated) || intervalAnswer !== null) {
      const readBack = await readVariables(this.conn, [updated, interval]);
      measurands = variableValue(readBack, updated) ?? measurands;
      intervalHeld =
        variableValue(readBack, interval) ??
        (intervalAnswer === 'Accepted'
          ? String(settings.meterSampleIntervalSeconds)
          : intervalHeld);
    }
    if (measurands !== null) this.conn.ctx.reports.metering(measurandList(measurands));
    return {
      refused: measurands === null ? refused : refused.filter((name) => name !== updated),
      samplingGap:
        samplingGap({
          wanted: settings.meterSampleIntervalSeconds,
          answer: intervalAnswer,
          held: intervalHeld,
        }) ?? measurandGap({ answer: measurandsAnswer, before }),
      // OnIdle waits for the station's transactions to end.
      idle: true,
    };
  }
}

/** The calls a route table answers: one set per table, shared by all its connections. */
const METHODS = new WeakMap<Routes201, ReadonlySet<string>>();
function methodsOf(routes: Routes201): ReadonlySet<string> {
  let methods = METHODS.get(routes);
  if (!methods) METHODS.set(routes, (methods = new Set(Object.keys(routes))));
  return methods;
}

function connection201(ctx: AdapterContext): ConnectionContext201 {
  const txs = Transactions201.of(ctx.db);
  const screen = new Screen201(ctx);
  return {
    ctx,
    txs,
    transactionEvents: new TransactionEvents201(ctx, txs, screen),
    screen,
    now: () => new Date(ctx.clock.now()).toISOString(),
    connectorIdOf: (evseId) => ctx.site.connectorByOcppId(ctx.chargerId, evseId)?.id,
  };
}
