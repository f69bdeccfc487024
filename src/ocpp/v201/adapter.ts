import { operatorCalls201 } from './calls/operator.js';
import { WHOLE_CHARGER } from '../connector-state.js';
import type { ChargerSettings, CommandOutcome } from '../port.js';
import type { AdapterContext, OperatorCalls, ProtocolSession } from '../protocol-session.js';
import { reportReading } from '../report-reading.js';
import { callOutcome } from '../rpc.js';
import type {
  AuthorizeReq,
  BootNotificationReq,
  DataTransferReq,
  MeterValuesReq,
  NotifyEVChargingNeedsReq,
  RequestStartStopConf,
  SetVariablesConf,
  StatusNotificationReq,
  TransactionEventReq,
} from './messages.js';
import { latestReading201 } from './meter-values.js';
import { statusFrom201 } from './status.js';
import { TransactionEvents201 } from './transaction-events.js';
import { Transactions201 } from './transactions.js';

/** Measurands the gateway needs: the register for settlement, power for the stop prediction, SoC for quotes. */
const UPDATED_MEASURANDS = 'Energy.Active.Import.Register,Power.Active.Import,SoC';
const REGISTER = 'Energy.Active.Import.Register';

/** Messages a 2.0.1 charger sends that the gateway answers and keeps for the operator. */
const RECORDED = [
  'NotifyReport',
  'NotifyEvent',
  'SecurityEventNotification',
  'FirmwareStatusNotification',
  'LogStatusNotification',
  'NotifyChargingLimit',
  'ReservationStatusUpdate',
] as const;

/**
 * Speaks OCPP 2.0.1 with one connected charging station. The API's connectorId is the station's
 * EVSE id (the site config's ocppConnectorId); the gateway never addresses a connector inside an
 * EVSE, so a multi-cable EVSE works as one charging point, as 2.0.1 intends.
 */
export class V201Session implements ProtocolSession {
  private readonly txs: Transactions201;
  private readonly transactionEvents: TransactionEvents201;

  readonly operator: OperatorCalls;

  constructor(private readonly ctx: AdapterContext) {
    this.operator = operatorCalls201({ ctx });
    this.txs = new Transactions201(ctx.db);
    this.transactionEvents = new TransactionEvents201(ctx, this.txs);
    this.register();
  }

  async requestStart(connectorId: string, idToken: string): Promise<CommandOutcome> {
    const { ctx } = this;
    const connector = ctx.site.connector(ctx.chargerId, connectorId);
    if (!connector)
      throw new Error(`connector ${connectorId} is not configured on ${ctx.chargerId}`);
    const evseId = connector.ocppConnectorId;
    const remoteStartId = this.txs.newRemoteStart(ctx.chargerId, evseId, idToken, this.now());
    const reply = (await callOutcome(
      ctx.rpc,
      'RequestStartTransaction',
      { evseId, remoteStartId, idToken: { idToken, type: 'Central' } },
      ctx.callTimeoutMs,
    )) as RequestStartStopConf | null;
    if (reply?.status !== 'Accepted') return 'rejected';
    if (reply.transactionId) this.transactionEvents.adopt(reply.transactionId, evseId, idToken);
    return 'accepted';
  }

  async requestStop(transactionRef: string): Promise<CommandOutcome> {
    const reply = (await callOutcome(
      this.ctx.rpc,
      'RequestStopTransaction',
      { transactionId: transactionRef },
      this.ctx.callTimeoutMs,
    )) as RequestStartStopConf | null;
    return reply?.status === 'Accepted' ? 'accepted' : 'rejected';
  }

  /**
   * Device-model variables: meter samples during a transaction at the interval the paid-energy
   * stop needs, the register at its start and end (settlement), and the wait for the EV after a
   * remote start equal to the gateway's start timeout.
   */
  async configure(settings: ChargerSettings): Promise<string[]> {
    const wanted: [string, string, string][] = [
      ['SampledDataCtrlr', 'TxUpdatedInterval', String(settings.meterSampleIntervalSeconds)],
      ['SampledDataCtrlr', 'TxUpdatedMeasurands', UPDATED_MEASURANDS],
      ['SampledDataCtrlr', 'TxStartedMeasurands', REGISTER],
      ['SampledDataCtrlr', 'TxEndedMeasurands', REGISTER],
      ['TxCtrlr', 'EVConnectionTimeOut', String(settings.connectionTimeoutSeconds)],
    ];
    const reply = (await callOutcome(
      this.ctx.rpc,
      'SetVariables',
      {
        setVariableData: wanted.map(([component, variable, value]) => ({
          component: { name: component },
          variable: { name: variable },
          attributeValue: value,
        })),
      },
      this.ctx.callTimeoutMs,
    )) as SetVariablesConf | null;
    const taken = new Set(
      (reply?.setVariableResult ?? [])
        .filter((r) => r.attributeStatus === 'Accepted' || r.attributeStatus === 'RebootRequired')
        .map((r) => `${r.component.name}.${r.variable.name}`),
    );
    return wanted.map(([c, v]) => `${c}.${v}`).filter((name) => !taken.has(name));
  }

  private now(): string {
    return new Date(this.ctx.clock.now()).toISOString();
  }

  private connectorIdOf(evseId: number): string | undefined {
    return this.ctx.site.connectorByOcppId(this.ctx.chargerId, evseId)?.id;
  }

  private register(): void {
    const ctx = this.ctx;
    const { rpc, chargerId } = ctx;

    rpc.handle('BootNotification', ({ params }) => {
      const req = params as BootNotificationReq;
      ctx.reports.booted({
        vendor: req.chargingStation.vendorName,
        model: req.chargingStation.model,
        serialNumber: req.chargingStation.serialNumber ?? null,
        firmwareVersion: req.chargingStation.firmwareVersion ?? null,
      });
      return {
        status: 'Accepted',
        currentTime: this.now(),
        interval: ctx.heartbeatIntervalSeconds,
      };
    });

    rpc.handle('Heartbeat', () => ({ currentTime: this.now() }));

    rpc.handle('StatusNotification', ({ params }) => {
      const req = params as StatusNotificationReq;
      const connectorId = req.evseId === 0 ? WHOLE_CHARGER : this.connectorIdOf(req.evseId);
      if (connectorId) ctx.reports.status(connectorId, statusFrom201(req.connectorStatus), null);
      else ctx.reports.noted('StatusNotification', 'unconfigured EVSE', req);
      return {};
    });

    rpc.handle('Authorize', ({ params }) => {
      const req = params as AuthorizeReq;
      const verdict = ctx.events().authorize(chargerId, req.idToken.idToken, null);
      return { idTokenInfo: { status: verdict.accepted ? 'Accepted' : 'Invalid' } };
    });

    rpc.handle('TransactionEvent', ({ params }) =>
      this.transactionEvents.handle(params as TransactionEventReq),
    );

    rpc.handle('MeterValues', ({ params }) => {
      const req = params as MeterValuesReq;
      const connectorId = this.connectorIdOf(req.evseId);
      const reading = latestReading201(req.meterValue);
      if (!connectorId || !reading) return {};
      // Outside a transaction (2.0.1 sends transaction meter data in TransactionEvent).
      reportReading(ctx, connectorId, reading, null, true);
      return {};
    });

    rpc.handle('NotifyEVChargingNeeds', ({ params }) => {
      const req = params as NotifyEVChargingNeedsReq;
      const connectorId = this.connectorIdOf(req.evseId);
      const dc = req.chargingNeeds.dcChargingParameters;
      if (connectorId && dc) {
        ctx.reports.vehicle(
          connectorId,
          {
            ...(dc.stateOfCharge !== undefined && { socPercent: dc.stateOfCharge }),
            ...(dc.evEnergyCapacity !== undefined &&
              dc.evEnergyCapacity > 0 && { batteryWh: dc.evEnergyCapacity }),
          },
          this.now(),
        );
      }
      // Accepted: we take note; the gateway sends no charging schedule of its own.
      return { status: 'Accepted' };
    });

    rpc.handle('DataTransfer', ({ params }) => {
      const req = params as DataTransferReq;
      ctx.reports.noted('DataTransfer', `vendor ${req.vendorId}`, req);
      return { status: 'UnknownVendorId' };
    });

    for (const action of RECORDED) {
      rpc.handle(action, ({ params }) => {
        ctx.reports.noted(action, 'noted', params);
        return {};
      });
    }
  }
}
