import { ChargePointBase } from '../shared/charge-point-base.js';
import type { BootOutcome } from '../shared/charge-point-base.js';
import type { ChargePointOptions } from '../shared/charge-point-options.js';
import type { FaultCode } from '../shared/events.js';
import { reportedSoc } from '../shared/meter-reading.js';
import type { SimMeasurand } from '../shared/meter-reading.js';
import { DeviceModel } from './device-model.js';
import type { Ocpp201Family, Ocpp201Protocol } from './events.js';
import { Evse } from './evse.js';
import { meterValue } from './meter-values.js';
import type {
  BootReason,
  ConnectorStatus,
  OperationalStatus,
  ReadingContext,
  TransactionEventRequest,
  TransactionEventResponse,
} from './ocpp-types.js';
import type { OutgoingCalls } from './ocpp-messages.js';
import { TransactionEventQueue } from './transaction-event-queue.js';

// Pause between attempts to deliver a TransactionEvent the CSMS did not answer (simulated s).
const TRANSACTION_EVENT_RETRY_SECONDS = 10;

export interface ChargePoint201Options extends ChargePointOptions {
  /** Send every TransactionEvent twice, as some stations do after a lost response. */
  duplicateTransactionEvents?: boolean;
}

/**
 * The 2.0.1 station's own messages: boot, connector statuses, problems (NotifyEvent), meter
 * values outside transactions and the ordered TransactionEvent queue. Transactions, requests
 * from the CSMS and the public test/CLI API are layered on top in subclasses.
 */
export abstract class StationCore extends ChargePointBase<Ocpp201Protocol, OutgoingCalls, Evse> {
  readonly deviceModel = new DeviceModel({
    registerOnly: this.settings.personality.has('register-only'),
    smartCharging: !this.settings.personality.has('profiles-not-supported'),
    intervalAfterReboot: this.settings.personality.has('interval-after-reboot'),
    costScreen: this.settings.personality.has('cost-screen'),
  });
  // queued-burst: transaction samples still to hold back as if offline (then all go at once).
  protected heldSamples = 0;
  protected readonly transactionEvents: TransactionEventQueue;
  protected stationAvailability: OperationalStatus = 'Operative';
  protected bootReason: BootReason = 'PowerUp';
  private nextEventId = 1;

  /** `protocol`: ocpp2.1 for the 2.1 station built on this one (a superset of its messages). */
  constructor(options: ChargePoint201Options, protocol: Ocpp201Family = 'ocpp2.0.1') {
    super(options, {
      protocol,
      bootFieldLimits: { vendor: 50, model: 20, firmwareVersion: 50 },
      createOutlet: (id, settings) =>
        new Evse(id, settings.meterStartWh, settings.maxPowerW, settings.timeFactor),
    });
    this.transactionEvents = new TransactionEventQueue({
      isOnline: () => this.link.isOpen && this.booted && this.heldSamples === 0,
      send: (request) => this.call('TransactionEvent', request),
      delivered: (request, response) => this.onTransactionEventAnswered(request, response),
      pause: () => this.timers.sleep(TRANSACTION_EVENT_RETRY_SECONDS),
      warn: (message, error) => this.warn(message, error),
    });
    this.transactionEvents.duplicate = options.duplicateTransactionEvents ?? false;
  }

  get heartbeatIntervalSeconds(): number {
    return this.deviceModel.getInteger('OCPPCommCtrlr', 'HeartbeatInterval');
  }

  protected get evses(): readonly Evse[] {
    return this.outlets;
  }

  protected evse(evseId: number): Evse {
    return this.outlet(evseId);
  }

  /** Ends a transaction that a power cut interrupted (on the next boot). */
  protected abstract endAfterPowerLoss(evse: Evse): Promise<void>;
  protected abstract restartAlignedSampling(): void;
  protected abstract onTransactionEventAnswered(
    request: TransactionEventRequest,
    response: TransactionEventResponse,
  ): void;

  // ---------------------------------------------------------------- boot and reconnect

  protected async bootAndAnnounce(): Promise<void> {
    await this.boot();
    this.bootReason = 'PowerUp';
    for (const evse of this.evses) {
      if (evse.transaction) {
        if (this.settings.personality.has('forgets-transaction-on-reboot')) {
          this.forgetTransaction(evse);
        } else await this.endAfterPowerLoss(evse);
      }
      evse.setPowered(true);
    }
    this.restartHeartbeat();
    this.restartAlignedSampling();
    await this.sendAllStatuses();
    this.transactionEvents.drain();
    this.emit('connected', {
      identity: this.identity,
      heartbeatIntervalSeconds: this.heartbeatIntervalSeconds,
    });
  }

  protected bootRequest(reason: BootReason): OutgoingCalls['BootNotification']['req'] {
    return {
      reason,
      chargingStation: {
        model: this.settings.model,
        vendorName: this.settings.vendor,
        serialNumber: (this.settings.serialNumber ?? this.identity).slice(0, 25),
        firmwareVersion: this.settings.firmwareVersion,
      },
    };
  }

  protected sendBootNotification(): Promise<BootOutcome> {
    return this.call('BootNotification', this.bootRequest(this.bootReason));
  }

  protected setHeartbeatInterval(seconds: number): void {
    this.deviceModel.setInternal('OCPPCommCtrlr', 'HeartbeatInterval', String(seconds));
  }

  protected async onHeartbeatDue(): Promise<void> {
    await this.send('Heartbeat', {});
    // A TransactionEvent the CSMS did not answer gets another chance.
    this.transactionEvents.drain();
  }

  protected async onReconnected(): Promise<void> {
    this.emit('reconnected', { identity: this.identity });
    // Statuses may have changed while offline; the 2.0.1 spec does not queue them.
    await this.sendAllStatuses();
    this.transactionEvents.drain();
  }

  /** Firmware that loses a running transaction in a reboot: no Ended event, ever. */
  protected forgetTransaction(evse: Evse): void {
    this.timers.clear(`sample:${evse.id}`);
    const tx = evse.endTransaction();
    this.transactionEnded(evse);
    if (tx) this.warn(`transaction ${tx.id} forgotten in the reboot`);
  }

  protected onPowerOff(): void {
    for (const evse of this.evses) evse.pendingAuthorization = undefined;
  }

  protected resetToPowerOnState(): void {
    this.deviceModel.rebooted();
    for (const evse of this.evses) {
      evse.pendingAuthorization = undefined;
      if (evse.scheduledAvailability) evse.availability = evse.scheduledAvailability;
      evse.scheduledAvailability = undefined;
      evse.setConnectorStatus(this.restingStatus(evse), 'NoError');
    }
  }

  /** Messages other than TransactionEvent are not queued while offline (2.0.1 spec). */
  protected override async send<M extends keyof OutgoingCalls & string>(
    method: M,
    params: OutgoingCalls[M]['req'],
  ): Promise<OutgoingCalls[M]['conf'] | undefined> {
    if (!this.link.isOpen) return undefined;
    return super.send(method, params);
  }

  // ---------------------------------------------------------------- statuses and problems

  protected async notifyStatus(evse: Evse): Promise<void> {
    const { connectorStatus: status, errorCode } = evse;
    // Before the boot is accepted the spec forbids other messages; the boot announces all.
    if (this.booted) {
      await this.send('StatusNotification', {
        timestamp: new Date().toISOString(),
        connectorStatus: status,
        evseId: evse.id,
        connectorId: 1,
      });
    }
    this.emit('status', { connectorId: evse.id, status, errorCode });
  }

  protected async changeStatus(
    evse: Evse,
    status: ConnectorStatus,
    errorCode: FaultCode = 'NoError',
    force = false,
  ): Promise<void> {
    if (!force && evse.connectorStatus === status && evse.errorCode === errorCode) return;
    evse.setConnectorStatus(status, errorCode);
    await this.notifyStatus(evse);
  }

  protected async sendAllStatuses(): Promise<void> {
    for (const evse of this.evses) await this.notifyStatus(evse);
  }

  protected restingStatus(evse: Evse): ConnectorStatus {
    if (evse.availability === 'Inoperative' || this.stationAvailability === 'Inoperative') {
      return 'Unavailable';
    }
    return evse.vehicle ? 'Occupied' : 'Available';
  }

  /** Reports a connector problem (or its end) as a hard-wired NotifyEvent. */
  protected async notifyProblem(evse: Evse, errorCode: FaultCode, cleared: boolean): Promise<void> {
    const timestamp = new Date().toISOString();
    await this.send('NotifyEvent', {
      generatedAt: timestamp,
      seqNo: 0,
      eventData: [
        {
          eventId: this.nextEventId++,
          timestamp,
          trigger: 'Delta',
          actualValue: cleared ? 'false' : 'true',
          techInfo: errorCode,
          ...(cleared ? { cleared: true } : {}),
          ...(evse.transaction ? { transactionId: evse.transaction.id } : {}),
          component: { name: 'Connector', evse: { id: evse.id, connectorId: 1 } },
          variable: { name: 'Problem' },
          eventNotificationType: 'HardWiredNotification',
        },
      ],
    });
  }

  // ---------------------------------------------------------------- meter values

  /** A MeterValues message (outside transactions, or triggered) and the meterValues event. */
  protected async sendMeterValues(
    evse: Evse,
    measurands: readonly SimMeasurand[],
    context: ReadingContext,
  ): Promise<void> {
    const reading = evse.reading();
    await this.send('MeterValues', {
      evseId: evse.id,
      meterValue: [meterValue(reading, measurands, context, new Date())],
    });
    this.emit('meterValues', {
      connectorId: evse.id,
      ...(evse.transaction ? { transactionId: evse.transaction.id } : {}),
      registerWh: reading.registerWh,
      powerW: Math.round(reading.powerW),
      ...(reading.socPercent === undefined ? {} : { socPercent: reportedSoc(reading.socPercent) }),
    });
  }
}
