import { operatorCalls16 } from './calls/operator.js';
import { WHOLE_CHARGER } from '../connector-state.js';
import type { ChargerSettings, CommandOutcome } from '../port.js';
import type { AdapterContext, OperatorCalls, ProtocolSession } from '../protocol-session.js';
import { reportReading } from '../report-reading.js';
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

/**
 * 1.6 has no "offline" flag: a meter sample stamped this much before it arrived was queued while
 * the charger was offline, and describes the past (it moves the register, not the stop
 * prediction's rate). A timestamp before TRUSTED_CLOCK_FROM is a charger that never set its
 * clock (1970 after a reboot): it says nothing about when the sample was taken, so it counts as live.
 */
const QUEUED_AFTER_MS = 120_000;
const TRUSTED_CLOCK_FROM = Date.parse('2020-01-01T00:00:00Z');

function queued(timestamp: string, receivedAtMs: number): boolean {
  const at = Date.parse(timestamp);
  return Number.isFinite(at) && at >= TRUSTED_CLOCK_FROM && receivedAtMs - at > QUEUED_AFTER_MS;
}

/** Transaction ids the gateway hands out start at 1: 0 and -1 mean the charger does not know it. */
const isPlaceholderId = (id: number) => id <= 0;

/** Measurands the gateway needs: the register for settlement, power for the stop prediction, SoC for quotes. */
const SAMPLED_DATA = 'Energy.Active.Import.Register,Power.Active.Import,SoC';

/** Speaks OCPP 1.6J with one connected charge point. */
export class V16Session implements ProtocolSession {
  private readonly transactions: Transactions16;

  readonly operator: OperatorCalls;

  constructor(private readonly ctx: AdapterContext) {
    this.operator = operatorCalls16({ ctx });
    this.transactions = new Transactions16(ctx.db);
    this.register();
  }

  async requestStart(connectorId: string, idToken: string): Promise<CommandOutcome> {
    const connector = this.ctx.site.connector(this.ctx.chargerId, connectorId);
    if (!connector)
      throw new Error(`connector ${connectorId} is not configured on ${this.ctx.chargerId}`);
    const reply = (await callOutcome(
      this.ctx.rpc,
      'RemoteStartTransaction',
      { connectorId: connector.ocppConnectorId, idTag: idToken },
      this.ctx.callTimeoutMs,
    )) as StatusConf | null;
    return reply?.status === 'Accepted' ? 'accepted' : 'rejected';
  }

  async requestStop(transactionRef: string): Promise<CommandOutcome> {
    const reply = (await callOutcome(
      this.ctx.rpc,
      'RemoteStopTransaction',
      { transactionId: Number(transactionRef) },
      this.ctx.callTimeoutMs,
    )) as StatusConf | null;
    return reply?.status === 'Accepted' ? 'accepted' : 'rejected';
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
      const reply = (await callOutcome(
        this.ctx.rpc,
        'ChangeConfiguration',
        { key, value },
        this.ctx.callTimeoutMs,
      )) as StatusConf | null;
      if (reply?.status !== 'Accepted' && reply?.status !== 'RebootRequired') refused.push(key);
    }
    return refused;
  }

  private now(): string {
    return new Date(this.ctx.clock.now()).toISOString();
  }

  private connectorIdOf(ocppConnectorId: number): string | undefined {
    return this.ctx.site.connectorByOcppId(this.ctx.chargerId, ocppConnectorId)?.id;
  }

  private register(): void {
    const ctx = this.ctx;
    const { rpc, chargerId } = ctx;

    rpc.handle('BootNotification', ({ params }) => {
      const req = params as BootNotificationReq;
      ctx.reports.booted({
        vendor: req.chargePointVendor,
        model: req.chargePointModel,
        serialNumber: req.chargePointSerialNumber ?? req.chargeBoxSerialNumber ?? null,
        firmwareVersion: req.firmwareVersion ?? null,
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
      const errorCode = req.errorCode === 'NoError' ? null : req.errorCode;
      const connectorId =
        req.connectorId === 0 ? WHOLE_CHARGER : this.connectorIdOf(req.connectorId);
      if (connectorId) ctx.reports.status(connectorId, statusFrom16(req.status), errorCode);
      else ctx.reports.noted('StatusNotification', 'unconfigured connector', req);
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
      const tx = req.transactionId === undefined ? undefined : this.meterTransaction(req);
      if (req.transactionId !== undefined && !tx) {
        ctx.reports.noted('MeterValues', 'unknown transactionId', {
          transactionId: req.transactionId,
        });
      }
      const live = !queued(reading.timestamp, ctx.clock.now());
      reportReading(ctx, connectorId, reading, tx ? String(tx.id) : null, live);
      return {};
    });

    rpc.handle('StopTransaction', ({ params }) => {
      const req = params as StopTransactionReq;
      return ctx.db.transaction(() => this.stopTransaction(req))();
    });

    rpc.handle('DataTransfer', ({ params }) => {
      const req = params as DataTransferReq;
      ctx.reports.noted('DataTransfer', `vendor ${req.vendorId}`, req);
      return { status: 'UnknownVendorId' };
    });

    for (const action of ['FirmwareStatusNotification', 'DiagnosticsStatusNotification']) {
      rpc.handle(action, ({ params }) => {
        ctx.reports.noted(action, 'noted', params);
        return {};
      });
    }
  }

  /** The transaction a MeterValues names, or (id 0 / -1) the only one open on its connector. */
  private meterTransaction(req: MeterValuesReq) {
    const id = req.transactionId as number;
    if (!isPlaceholderId(id)) return this.transactions.get(id, this.ctx.chargerId);
    const tx = this.transactions.resolveUnknown(this.ctx.chargerId, { connector: req.connectorId });
    if (tx) {
      this.ctx.reports.noted('MeterValues', `transactionId ${id} taken as ${tx.id}`, {
        connectorId: req.connectorId,
      });
    }
    return tx;
  }

  private startTransaction(req: StartTransactionReq) {
    const { ctx } = this;
    const chargerId = ctx.chargerId;
    const repeat = this.transactions.findRepeat(
      chargerId,
      req.connectorId,
      req.idTag,
      req.timestamp,
    );
    if (repeat) {
      ctx.reports.noted('StartTransaction', 'repeated start answered again', {
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
      ctx.reports.noted('StartTransaction', 'transaction not started by us: Invalid', {
        transactionId: id,
        connectorId: req.connectorId,
      });
    }
    return { transactionId: id, idTagInfo: { status: accepted ? 'Accepted' : 'Invalid' } };
  }

  private stopTransaction(req: StopTransactionReq) {
    const { ctx } = this;
    const chargerId = ctx.chargerId;
    const tx = isPlaceholderId(req.transactionId)
      ? this.transactions.resolveUnknown(
          chargerId,
          req.idTag === undefined ? {} : { idTag: req.idTag },
        )
      : this.transactions.get(req.transactionId, chargerId);
    if (tx && tx.id !== req.transactionId) {
      ctx.reports.noted('StopTransaction', `transactionId ${req.transactionId} taken as ${tx.id}`, {
        idTag: req.idTag ?? null,
      });
    }
    if (!tx) {
      // Never block a charger's queue: answer, and keep the message for the operator.
      ctx.reports.noted('StopTransaction', 'unknown transactionId', req);
      return {};
    }
    const reason = req.reason ?? 'Local';
    if (!this.transactions.stop(tx.id, req.meterStop, req.timestamp, reason)) {
      ctx.reports.noted('StopTransaction', 'repeated stop answered again', {
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
      live: !queued(req.timestamp, ctx.clock.now()),
    });
    return req.idTag ? { idTagInfo: { status: 'Accepted' } } : {};
  }
}
