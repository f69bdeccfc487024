import { COST_KEY, screenWaysIn } from './screen.js';
import type {
  ChargerReply,
  ChargerSettings,
  ScreenNote,
  ScreenOutcome,
  TransactionProbe,
} from '../port.js';
import { SharedAdapter, type VersionMessages } from '../calls/shared-adapter.js';
import { ocppConnectorId } from '../calls/ocpp-connector.js';
import type {
  AdapterContext,
  Configured,
  LocalAuthCalls,
  OperatorCalls,
  ChargerAdapter,
} from '../protocol-adapter.js';
import { localAuthorization16 } from './local-authorization.js';
import { stepOf } from '../calls/step-outcome.js';
import { operatorCalls16 } from './calls/operator.js';
import { IntervalEnergy } from '../metering/interval-energy.js';
import { ENERGY_REGISTER } from '../metering/meter-reading.js';
import { measurandList } from '../metering/metering.js';
import { measurandGap, samplingGap } from '../metering/sampling-gap.js';
import { settingHeld } from '../charger-state/setting-held.js';
import { changeAvailability } from './calls/change-availability.js';
import { sendChangeConfiguration, settingTaken } from './calls/change-configuration.js';
import { clearCeilingProfile } from './calls/clear-charging-profile.js';
import { configurationValue, readConfiguration } from './calls/get-configuration.js';
import { parseRateUnits } from '../calls/power-limit.js';
import { remoteStartTransaction } from './calls/remote-start-transaction.js';
import { remoteStopTransaction } from './calls/remote-stop-transaction.js';
import { setCeilingProfile, setZeroChargingProfile } from './calls/set-charging-profile.js';
import { triggerMessage } from './calls/trigger-message.js';
import { unlockConnector } from './calls/unlock-connector.js';
import type { Requests16 } from './normalize.js';
import { ROUTES16 } from './routes.js';
import { Screen16 } from './screen.js';
import type { Handler16, ConnectionContext16 } from './connection-context.js';
import { Transactions16 } from './transactions.js';

/** Measurands the gateway needs: the register for settlement, power for the stop prediction, SoC for quotes. */
const SAMPLED_DATA = 'Energy.Active.Import.Register,Power.Active.Import,SoC';
/** What a charger that refuses the list above (no SoC, say) must at least send: the register. */
const REGISTER_ONLY = ENERGY_REGISTER;
const SAMPLED_DATA_KEY = 'MeterValuesSampledData';
const INTERVAL_KEY = 'MeterValueSampleInterval';
/** Smart Charging's read-only key: Current, Power or both. */
const RATE_UNIT_KEY = 'ChargingScheduleAllowedChargingRateUnit';

/** The calls this version answers: one set for all its connections. */
const METHODS16: ReadonlySet<string> = new Set(Object.keys(ROUTES16));

/** The 1.6 messages for the calls both adapters make alike (calls/shared-adapter.ts). */
const MESSAGES16: VersionMessages<ConnectionContext16> = {
  requestStart: remoteStartTransaction,
  requestStop: remoteStopTransaction,
  setZeroProfile: setZeroChargingProfile,
  setCeilingProfile,
  clearCeilingProfile,
  changeAvailability,
  // 1.6 chargers end the connector's transaction before they unlock it (Unlocked).
  unlockConnector,
};

/** Speaks OCPP 1.6J with one connected charge point. */
export class Adapter16 extends SharedAdapter<ConnectionContext16> implements ChargerAdapter {
  constructor(ctx: AdapterContext) {
    super(connection16(ctx), MESSAGES16);
    ctx.rpc.serve(METHODS16, ({ method, params }) =>
      (ROUTES16[method as keyof Requests16] as Handler16)(this.conn, params),
    );
  }

  /** Made when the operator calls (rarely): nothing a connection holds until then. */
  get operator(): OperatorCalls {
    return operatorCalls16(this.conn);
  }

  get localAuth(): LocalAuthCalls {
    return localAuthorization16(this.conn);
  }

  protected runsTransaction(connectorId: string, transactionRef: string): boolean {
    const tx = this.conn.transactions.get(Number(transactionRef), this.conn.ctx.chargerId);
    return (
      tx !== undefined &&
      !tx.stopped &&
      tx.connector === ocppConnectorId(this.conn.ctx, connectorId)
    );
  }

  /**
   * Nothing to read: the configuration read (configure) asks for the screen's key too, and a
   * start promotes that read ahead of its RemoteStartTransaction; no 1.6 answer carries a text.
   */
  prepareScreen(): void {}

  showOnScreen(note: ScreenNote): Promise<ScreenOutcome> {
    return this.conn.screen.show(note);
  }

  /**
   * 1.6 cannot be asked about a transaction: the connector's status and a fresh meter value are
   * asked for, and arrive as ordinary messages (Available with no transaction: it has ended).
   */
  async probeTransaction(connectorId: string): Promise<TransactionProbe> {
    const id = ocppConnectorId(this.conn.ctx, connectorId);
    const status = stepOf(await triggerMessage(this.conn, id, 'status'));
    const meter = stepOf(await triggerMessage(this.conn, id, 'meter'));
    return status === 'accepted' || meter === 'accepted' ? 'asked' : 'unknown';
  }

  /**
   * Asks for the meter data the gateway needs, at the interval it can work with, aligns the
   * charger's wait for the EV (ConnectionTimeOut) with the session start timeout (less a margin),
   * and has it end a transaction the gateway answers Invalid on its own. The charger's settings
   * are read first and only those it does not already hold are changed: a charger reconnecting
   * (after a network drop or a gateway restart, hundreds at once in a reconnect storm) costs one
   * round trip, not five. A charger that refuses the measurand list is asked for the register
   * alone. When the list or the sample interval was changed, what the charger holds is read back
   * (chargers accept values they do not apply) and recorded, so that a charger reporting no energy,
   * or not sampling it at the interval asked for, is known before a Start. The units its charging
   * schedules take come from the first read (the load manager's ceilings).
   */
  async configure(settings: ChargerSettings): Promise<Configured> {
    const interval = String(settings.meterSampleIntervalSeconds);
    const wanted: [string, string][] = [
      [INTERVAL_KEY, interval],
      [SAMPLED_DATA_KEY, SAMPLED_DATA],
      ['ConnectionTimeOut', String(settings.connectionTimeoutSeconds)],
      ['StopTransactionOnInvalidId', 'true'],
    ];
    // The screen's key rides on this read: a paid session's first start then needs no read of its own.
    const held = await readConfiguration(this.conn, [
      ...wanted.map(([key]) => key),
      RATE_UNIT_KEY,
      COST_KEY,
    ]);
    this.rateUnits = parseRateUnits(configurationValue(held, RATE_UNIT_KEY));
    this.conn.ctx.screens.learnt(this.conn.ctx.chargerId, screenWaysIn(held));
    const refused: string[] = [];
    const before = configurationValue(held, SAMPLED_DATA_KEY);
    let measurands = before;
    // The charger's answer to each key changed (for the list: to the one it took, if any).
    const answers = new Map<string, string>();
    for (const [key, value] of wanted) {
      if (settingHeld(configurationValue(held, key), value)) continue;
      const reply = await sendChangeConfiguration(this.conn, key, value);
      answers.set(key, reply.status);
      if (settingTaken(reply)) {
        if (key === SAMPLED_DATA_KEY) measurands = value;
        continue;
      }
      const fallback = key === SAMPLED_DATA_KEY ? await this.registerOnly() : null;
      if (fallback !== null && settingTaken(fallback)) {
        answers.set(key, fallback.status);
        measurands = REGISTER_ONLY;
      } else refused.push(key);
    }
    const intervalAnswer = answers.get(INTERVAL_KEY) ?? null;
    let intervalHeld = configurationValue(held, INTERVAL_KEY);
    if (answers.has(SAMPLED_DATA_KEY) || intervalAnswer !== null) {
      // Some chargers accept a value and keep their own: what they hold is what counts.
      const readBack = await readConfiguration(this.conn, [INTERVAL_KEY, SAMPLED_DATA_KEY]);
      measurands = configurationValue(readBack, SAMPLED_DATA_KEY) ?? measurands;
      intervalHeld =
        configurationValue(readBack, INTERVAL_KEY) ??
        (intervalAnswer === 'Accepted' ? interval : intervalHeld);
    }
    if (measurands !== null) this.conn.ctx.reports.metering(measurandList(measurands));
    const { ctx, transactions } = this.conn;
    return {
      refused,
      samplingGap:
        samplingGap({
          wanted: settings.meterSampleIntervalSeconds,
          answer: intervalAnswer,
          held: intervalHeld,
        }) ?? measurandGap({ answer: answers.get(SAMPLED_DATA_KEY) ?? null, before }),
      idle: transactions.candidates(ctx.chargerId, {}).length === 0,
    };
  }

  private async registerOnly(): Promise<ChargerReply> {
    const reply = await sendChangeConfiguration(this.conn, SAMPLED_DATA_KEY, REGISTER_ONLY);
    this.conn.ctx.reports.noted(
      'ChangeConfiguration',
      settingTaken(reply)
        ? 'measurand list refused: register alone taken'
        : 'measurand list refused',
      { key: SAMPLED_DATA_KEY },
    );
    return reply;
  }
}

function connection16(ctx: AdapterContext): ConnectionContext16 {
  return {
    ctx,
    transactions: Transactions16.of(ctx.db),
    intervals: IntervalEnergy.of(ctx.db),
    screen: new Screen16(ctx),
    now: () => new Date(ctx.clock.now()).toISOString(),
    connectorIdOf: (ocppConnectorId) =>
      ctx.site.connectorByOcppId(ctx.chargerId, ocppConnectorId)?.id,
  };
}
