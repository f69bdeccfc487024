import { ChargePointBase } from '../shared/charge-point-base.js';
import type { BootOutcome } from '../shared/charge-point-base.js';
import type { ChargePointOptions } from '../shared/charge-point-options.js';
import type { SimMeasurand } from '../shared/meter-reading.js';
import { reportedSoc } from '../shared/meter-reading.js';
import { ConfigurationStore } from './configuration.js';
import { Connector } from './connector.js';
import type { MeterValuesEvent, Ocpp16Protocol } from './events.js';
import { meterValue } from './meter-sampling.js';
import { TransactionMessageQueue } from './transaction-message-queue.js';
import type {
  AvailabilityType,
  ChargePointErrorCode,
  ChargePointStatus,
  MeterValuesRequest,
  OutgoingCalls,
  ReadingContext,
  StopReason,
  StopTransactionRequest,
} from './ocpp-types.js';

/**
 * The 1.6 charge point's own messages: boot, statuses, meter values and the delivery of
 * StopTransaction. Transactions, requests from the central system and the public test/CLI API
 * are layered on top in subclasses.
 */
export abstract class ChargePointCore extends ChargePointBase<
  Ocpp16Protocol,
  OutgoingCalls,
  Connector
> {
  readonly configuration: ConfigurationStore;
  protected mainStatus: ChargePointStatus = 'Available';
  protected mainErrorCode: ChargePointErrorCode = 'NoError';
  protected mainAvailability: AvailabilityType = 'Operative';
  // Transaction messages must reach the central system eventually, in order (billing depends on it).
  protected readonly transactionMessages: TransactionMessageQueue;
  // queued-burst: transaction samples still to hold back as if offline (then all go at once).
  protected heldSamples = 0;

  constructor(options: ChargePointOptions) {
    super(options, {
      protocol: 'ocpp1.6',
      bootFieldLimits: { vendor: 20, model: 20, firmwareVersion: 50 },
      createOutlet: (id, settings) =>
        new Connector(id, settings.meterStartWh, settings.maxPowerW, settings.timeFactor),
    });
    const personality = this.settings.personality;
    this.configuration = new ConfigurationStore(this.settings.connectors, {
      registerOnly: personality.has('register-only'),
      smartCharging: !personality.has('profiles-not-supported'),
      intervalAfterReboot: personality.has('interval-after-reboot'),
      costScreen: personality.has('cost-screen'),
    });
    this.transactionMessages = new TransactionMessageQueue({
      isOpen: () => this.booted && this.link.isOpen && this.heldSamples === 0,
      call: (action, params) => this.call(action, params),
      assigned: (provisionalId, conf) => this.onTransactionIdAssigned(provisionalId, conf),
      warn: (message, error) => this.warn(message, error),
    });
  }

  /** A StartTransaction made offline was answered: the transaction takes its real id. */
  protected abstract onTransactionIdAssigned(
    provisionalId: number,
    conf: OutgoingCalls['StartTransaction']['conf'],
  ): void;

  get sampleIntervalSeconds(): number {
    return this.configuration.getInteger('MeterValueSampleInterval');
  }

  get heartbeatIntervalSeconds(): number {
    return this.configuration.getInteger('HeartbeatInterval');
  }

  get connectionTimeoutSeconds(): number {
    return this.configuration.getInteger('ConnectionTimeOut');
  }

  get sampledMeasurands(): SimMeasurand[] {
    return this.configuration.getMeasurands('MeterValuesSampledData');
  }

  protected get connectors(): readonly Connector[] {
    return this.outlets;
  }

  protected connector(connectorId: number): Connector {
    return this.outlet(connectorId);
  }

  protected abstract stopTransaction(connector: Connector, reason: StopReason): Promise<void>;
  protected abstract restartClockAlignedSampling(): void;

  // ---------------------------------------------------------------- boot and reconnect

  protected async bootAndAnnounce(): Promise<void> {
    await this.boot();
    for (const connector of this.connectors) {
      if (connector.transaction) {
        if (this.settings.personality.has('forgets-transaction-on-reboot')) {
          this.forgetTransaction(connector);
        } else await this.stopTransaction(connector, 'PowerLoss');
      }
      connector.setPowered(true);
    }
    this.restartHeartbeat();
    this.restartClockAlignedSampling();
    await this.transactionMessages.flush();
    await this.sendAllStatuses();
    this.emit('connected', {
      identity: this.identity,
      heartbeatIntervalSeconds: this.heartbeatIntervalSeconds,
    });
  }

  protected bootRequest(): OutgoingCalls['BootNotification']['req'] {
    return {
      chargePointVendor: this.settings.vendor,
      chargePointModel: this.settings.model,
      chargePointSerialNumber: (this.settings.serialNumber ?? this.identity).slice(0, 25),
      firmwareVersion: this.settings.firmwareVersion,
      meterType: 'SimMeter DC',
    };
  }

  protected sendBootNotification(): Promise<BootOutcome> {
    return this.call('BootNotification', this.bootRequest());
  }

  protected setHeartbeatInterval(seconds: number): void {
    this.configuration.set('HeartbeatInterval', String(seconds));
  }

  protected async onHeartbeatDue(): Promise<void> {
    await this.send('Heartbeat', {});
    // A transaction message that timed out on an open socket gets another chance here.
    await this.transactionMessages.flush();
  }

  protected async onReconnected(): Promise<void> {
    this.emit('reconnected', { identity: this.identity });
    // What happened while offline first, in order; then how things stand now.
    await this.transactionMessages.flush();
    await this.sendAllStatuses();
  }

  /** Firmware that loses a running transaction in a reboot: no StopTransaction, ever. */
  protected forgetTransaction(connector: Connector): void {
    this.timers.clear(`sample:${connector.id}`);
    const transaction = connector.endTransaction();
    this.transactionEnded(connector);
    // No transaction after the reboot: the status it reports is that of a connector without one
    // (Preparing with the cable still in), not the Charging it had before the power went.
    if (connector.status !== 'Unavailable' && connector.status !== 'Faulted')
      connector.setStatus(this.restingStatus(connector), connector.errorCode);
    if (transaction) this.warn(`transaction ${transaction.id} forgotten in the reboot`);
  }

  protected onPowerOff(): void {
    for (const connector of this.connectors) connector.pendingRemoteStart = undefined;
  }

  protected resetToPowerOnState(): void {
    this.configuration.rebooted();
    this.mainStatus = this.mainAvailability === 'Inoperative' ? 'Unavailable' : 'Available';
    this.mainErrorCode = 'NoError';
    for (const connector of this.connectors) {
      connector.pendingRemoteStart = undefined;
      if (connector.scheduledAvailability) connector.availability = connector.scheduledAvailability;
      connector.scheduledAvailability = undefined;
      connector.setStatus(this.restingStatus(connector), 'NoError');
    }
  }

  // ---------------------------------------------------------------- statuses

  protected async notifyStatus(
    connectorId: number,
    status: ChargePointStatus,
    errorCode: ChargePointErrorCode,
  ): Promise<void> {
    // Before the boot is accepted the spec forbids other messages; the boot announces all.
    if (this.booted) {
      await this.send('StatusNotification', {
        connectorId,
        errorCode,
        status,
        timestamp: new Date().toISOString(),
      });
    }
    this.emit('status', { connectorId, status, errorCode });
  }

  protected async changeStatus(
    connector: Connector,
    status: ChargePointStatus,
    errorCode: ChargePointErrorCode = 'NoError',
    force = false,
  ): Promise<void> {
    if (!force && connector.status === status && connector.errorCode === errorCode) return;
    connector.setStatus(status, errorCode);
    this.scheduleFullCheck(connector);
    await this.notifyStatus(connector.id, status, errorCode);
  }

  protected async sendAllStatuses(): Promise<void> {
    await this.notifyStatus(0, this.mainStatus, this.mainErrorCode);
    for (const connector of this.connectors) {
      await this.notifyStatus(connector.id, connector.status, connector.errorCode);
    }
  }

  protected restingStatus(connector: Connector): ChargePointStatus {
    if (connector.availability === 'Inoperative') return 'Unavailable';
    return connector.vehicle ? 'Preparing' : 'Available';
  }

  // ---------------------------------------------------------------- meter values and stops

  protected async sendMeterValues(
    connector: Connector,
    measurands: readonly SimMeasurand[],
    context: ReadingContext,
    transactionId?: number,
  ): Promise<void> {
    const reading = connector.reading();
    const request: MeterValuesRequest = {
      connectorId: connector.id,
      meterValue: [meterValue(reading, measurands, context, new Date())],
    };
    const event: MeterValuesEvent = {
      connectorId: connector.id,
      registerWh: reading.registerWh,
      powerW: Math.round(reading.powerW),
    };
    if (transactionId !== undefined) {
      request.transactionId = transactionId;
      event.transactionId = transactionId;
    }
    if (reading.socPercent !== undefined) event.socPercent = reportedSoc(reading.socPercent);
    // Transaction meter data is queued while offline; a sample outside one is only "now".
    if (transactionId === undefined) await this.send('MeterValues', request);
    else {
      // queued-burst: the last held sample brings the link "back" and the queue goes in a burst.
      if (this.heldSamples > 0) this.heldSamples -= 1;
      await this.transactionMessages.deliver({ action: 'MeterValues', params: request });
    }
    this.emit('meterValues', event);
  }

  protected async deliverStopTransaction(request: StopTransactionRequest): Promise<void> {
    this.heldSamples = 0;
    await this.transactionMessages.deliver({ action: 'StopTransaction', params: request });
  }
}
