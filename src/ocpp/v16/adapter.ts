import type { SiteDirectory } from '../../config/site.js';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/log.js';
import type { Db } from '../../store/database.js';
import type { ConnectorStateStore } from '../connector-state.js';
import { WHOLE_CHARGER } from '../connector-state.js';
import type { OcppEventLog } from '../event-log.js';
import type { ChargerEvents, CommandOutcome } from '../port.js';
import type { ProtocolSession, RpcConnection } from '../rpc.js';
import { callOutcome } from '../rpc.js';
import { latestReading } from './meter-values.js';
import type {
  AuthorizeReq,
  BootNotificationReq,
  DataTransferReq,
  MeterValuesReq,
  StartTransactionReq,
  StatusConf,
  StatusNotificationReq,
  StopTransactionReq,
} from './messages.js';
import { statusFrom16 } from './status.js';
import { Transactions16 } from './transactions.js';

export interface V16Context {
  db: Db;
  site: SiteDirectory;
  clock: Clock;
  log: Logger;
  connectors: ConnectorStateStore;
  events: () => ChargerEvents;
  eventLog: OcppEventLog;
  heartbeatIntervalSeconds: number;
  meterSampleIntervalSeconds: number;
  connectionTimeoutSeconds: number;
  callTimeoutMs: number;
  recordBoot: (chargerId: string, info: BootNotificationReq) => void;
}

/** Measurands the gateway needs: the register for settlement, power for the stop prediction, SoC for quotes. */
const SAMPLED_DATA = 'Energy.Active.Import.Register,Power.Active.Import,SoC';

/** Speaks OCPP 1.6J with one connected charge point. */
export class V16Session implements ProtocolSession {
  private readonly transactions: Transactions16;

  constructor(
    private readonly chargerId: string,
    private readonly rpc: RpcConnection,
    private readonly ctx: V16Context,
  ) {
    this.transactions = new Transactions16(ctx.db);
    this.register();
  }

  async requestStart(connectorId: string, idToken: string): Promise<CommandOutcome> {
    const connector = this.ctx.site.connector(this.chargerId, connectorId);
    if (!connector)
      throw new Error(`connector ${connectorId} is not configured on ${this.chargerId}`);
    const reply = (await callOutcome(
      this.rpc,
      'RemoteStartTransaction',
      { connectorId: connector.ocppConnectorId, idTag: idToken },
      this.ctx.callTimeoutMs,
    )) as StatusConf | null;
    return reply?.status === 'Accepted' ? 'accepted' : 'rejected';
  }

  async requestStop(transactionRef: string): Promise<CommandOutcome> {
    const reply = (await callOutcome(
      this.rpc,
      'RemoteStopTransaction',
      { transactionId: Number(transactionRef) },
      this.ctx.callTimeoutMs,
    )) as StatusConf | null;
    return reply?.status === 'Accepted' ? 'accepted' : 'rejected';
  }

  private now(): string {
    return new Date(this.ctx.clock.now()).toISOString();
  }

  private connectorIdOf(ocppConnectorId: number): string | undefined {
    return this.ctx.site.connectorByOcppId(this.chargerId, ocppConnectorId)?.id;
  }

  private register(): void {
    const { rpc, ctx, chargerId } = this;

    rpc.handle('BootNotification', ({ params }) => {
      ctx.recordBoot(chargerId, params as BootNotificationReq);
      setTimeout(() => {
        this.configure().catch((err: unknown) =>
          ctx.log.warn({ chargerId, err: (err as Error).message }, 'configuration failed'),
        );
      }, 0);
      return {
        status: 'Accepted',
        currentTime: this.now(),
        interval: ctx.heartbeatIntervalSeconds,
      };
    });

    rpc.handle('Heartbeat', () => ({ currentTime: this.now() }));

    rpc.handle('StatusNotification', ({ params }) => {
      const req = params as StatusNotificationReq;
      const status = statusFrom16(req.status);
      const errorCode = req.errorCode === 'NoError' ? null : req.errorCode;
      if (req.connectorId === 0) {
        ctx.connectors.setStatus(chargerId, WHOLE_CHARGER, status, errorCode);
      } else {
        const connectorId = this.connectorIdOf(req.connectorId);
        if (connectorId) ctx.connectors.setStatus(chargerId, connectorId, status, errorCode);
        else ctx.eventLog.record(chargerId, 'StatusNotification', 'unconfigured connector', req);
      }
      return {};
    });

    rpc.handle('Authorize', ({ params }) => {
      const req = params as AuthorizeReq;
      const verdict = ctx.events().authorize(chargerId, req.idTag, null);
      return { idTagInfo: { status: verdict.accepted ? 'Accepted' : 'Invalid' } };
    });

    rpc.handle('StartTransaction', ({ params }) => {
      const req = params as StartTransactionReq;
      return ctx.db.transaction(() => this.startTransaction(req))();
    });

    rpc.handle('MeterValues', ({ params }) => {
      const req = params as MeterValuesReq;
      const connectorId = this.connectorIdOf(req.connectorId);
      const reading = latestReading(req.meterValue);
      if (!connectorId || !reading) return {};
      if (reading.socPercent !== null) {
        ctx.connectors.setSoc(chargerId, connectorId, reading.socPercent, this.now());
      }
      const tx =
        req.transactionId === undefined
          ? undefined
          : this.transactions.get(req.transactionId, chargerId);
      if (req.transactionId !== undefined && !tx) {
        ctx.eventLog.record(chargerId, 'MeterValues', 'unknown transactionId', {
          transactionId: req.transactionId,
        });
      }
      ctx.events().meterSample({
        chargerId,
        connectorId,
        transactionRef: tx ? String(tx.id) : null,
        energyWh: reading.energyWh,
        powerW: reading.powerW,
        socPercent: reading.socPercent,
        timestamp: reading.timestamp,
        receivedAtMs: ctx.clock.now(),
      });
      return {};
    });

    rpc.handle('StopTransaction', ({ params }) => {
      const req = params as StopTransactionReq;
      return ctx.db.transaction(() => this.stopTransaction(req))();
    });

    rpc.handle('DataTransfer', ({ params }) => {
      const req = params as DataTransferReq;
      ctx.eventLog.record(chargerId, 'DataTransfer', `vendor ${req.vendorId}`, req);
      return { status: 'UnknownVendorId' };
    });

    for (const action of ['FirmwareStatusNotification', 'DiagnosticsStatusNotification']) {
      rpc.handle(action, ({ params }) => {
        ctx.eventLog.record(chargerId, action, 'noted', params);
        return {};
      });
    }
  }

  private startTransaction(req: StartTransactionReq) {
    const { ctx, chargerId } = this;
    const repeat = this.transactions.findRepeat(
      chargerId,
      req.connectorId,
      req.idTag,
      req.timestamp,
    );
    if (repeat) {
      ctx.eventLog.record(chargerId, 'StartTransaction', 'repeated start answered again', {
        transactionId: repeat.id,
      });
      return {
        transactionId: repeat.id,
        idTagInfo: { status: repeat.accepted ? 'Accepted' : 'Invalid' },
      };
    }
    const id = this.transactions.open(
      chargerId,
      req.connectorId,
      req.idTag,
      req.meterStart,
      req.timestamp,
    );
    const connectorId = this.connectorIdOf(req.connectorId);
    let accepted = false;
    if (connectorId) {
      accepted = ctx.events().transactionStarted({
        chargerId,
        connectorId,
        idToken: req.idTag,
        transactionRef: String(id),
        meterStartWh: req.meterStart,
        timestamp: req.timestamp,
        receivedAtMs: ctx.clock.now(),
      }).accepted;
    }
    this.transactions.setAccepted(id, accepted);
    if (!accepted) {
      ctx.eventLog.record(chargerId, 'StartTransaction', 'transaction not started by us: Invalid', {
        transactionId: id,
        connectorId: req.connectorId,
      });
    }
    return { transactionId: id, idTagInfo: { status: accepted ? 'Accepted' : 'Invalid' } };
  }

  private stopTransaction(req: StopTransactionReq) {
    const { ctx, chargerId } = this;
    const tx = this.transactions.get(req.transactionId, chargerId);
    if (!tx) {
      // Never block a charger's queue: answer, and keep the message for the operator.
      ctx.eventLog.record(chargerId, 'StopTransaction', 'unknown transactionId', req);
      return {};
    }
    const reason = req.reason ?? 'Local';
    if (!this.transactions.stop(tx.id, req.meterStop, req.timestamp, reason)) {
      ctx.eventLog.record(chargerId, 'StopTransaction', 'repeated stop answered again', {
        transactionId: tx.id,
      });
    }
    const final = req.transactionData ? latestReading(req.transactionData) : null;
    ctx.events().transactionEnded({
      chargerId,
      transactionRef: String(tx.id),
      meterStopWh: Number.isSafeInteger(req.meterStop) ? req.meterStop : (final?.energyWh ?? null),
      reason,
      timestamp: req.timestamp,
      receivedAtMs: ctx.clock.now(),
    });
    return req.idTag ? { idTagInfo: { status: 'Accepted' } } : {};
  }

  /**
   * After boot: ask for the meter data the gateway needs, at the interval it can work with, and
   * align the charger's wait for the EV with the session start timeout.
   */
  private async configure(): Promise<void> {
    const settings: [string, string][] = [
      ['MeterValueSampleInterval', String(this.ctx.meterSampleIntervalSeconds)],
      ['MeterValuesSampledData', SAMPLED_DATA],
      // The charger gives up waiting for the EV when the gateway refunds, not later.
      ['ConnectionTimeOut', String(this.ctx.connectionTimeoutSeconds)],
    ];
    for (const [key, value] of settings) {
      try {
        const reply = (await callOutcome(
          this.rpc,
          'ChangeConfiguration',
          { key, value },
          this.ctx.callTimeoutMs,
        )) as StatusConf | null;
        if (reply?.status !== 'Accepted' && reply?.status !== 'RebootRequired') {
          this.ctx.eventLog.record(
            this.chargerId,
            'ChangeConfiguration',
            `${key} ${reply?.status ?? 'refused'}`,
          );
        }
      } catch (err) {
        this.ctx.log.warn(
          { chargerId: this.chargerId, key, err: (err as Error).message },
          'configuration not applied',
        );
        return;
      }
    }
  }
}
