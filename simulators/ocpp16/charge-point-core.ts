import { EventEmitter } from 'node:events';
import { resolveOptions } from './charge-point-options.js';
import type { ChargePointOptions, ResolvedChargePointOptions } from './charge-point-options.js';
import { ConfigurationStore } from './configuration.js';
import { Connector } from './connector.js';
import type { ChargePointEvents, MeterValuesEvent } from './events.js';
import { meterValue, reportedSoc } from './meter-sampling.js';
import type {
  AvailabilityType,
  ChargePointErrorCode,
  ChargePointStatus,
  Measurand,
  MeterValuesRequest,
  OutgoingCalls,
  ReadingContext,
  StopReason,
  StopTransactionRequest,
} from './ocpp-types.js';
import { CentralSystemLink } from './central-system-link.js';
import { isRpcErrorResponse } from './rpc-client.js';
import type { RpcClient } from './rpc-client.js';
import { SimTimers } from './sim-timers.js';

// When the central system answers a boot with interval 0 the charge point picks its own delay.
const DEFAULT_BOOT_RETRY_SECONDS = 30;

/**
 * The charge point's own behaviour: connection, boot, outgoing messages, transaction lifecycle,
 * metering and timers. Requests from the central system and the public test/CLI API are layered
 * on top in subclasses.
 */
export abstract class ChargePointCore extends EventEmitter<ChargePointEvents> {
  readonly identity: string;
  readonly configuration: ConfigurationStore;
  protected readonly settings: ResolvedChargePointOptions;
  protected readonly timers: SimTimers;
  protected readonly connectors: Connector[];
  protected mainStatus: ChargePointStatus = 'Available';
  protected mainErrorCode: ChargePointErrorCode = 'NoError';
  protected mainAvailability: AvailabilityType = 'Operative';
  protected readonly link: CentralSystemLink;
  protected active = false;
  protected booted = false;
  // StopTransaction must reach the central system eventually (billing depends on it).
  private readonly undeliveredStops: StopTransactionRequest[] = [];

  constructor(options: ChargePointOptions) {
    super();
    this.settings = resolveOptions(options);
    this.identity = this.settings.identity;
    this.configuration = new ConfigurationStore(this.settings.connectors);
    this.timers = new SimTimers(this.settings.timeFactor, (error) =>
      this.warn('timer task failed', error),
    );
    this.connectors = Array.from(
      { length: this.settings.connectors },
      (_, index) =>
        new Connector(
          index + 1,
          this.settings.meterStartWh,
          this.settings.maxPowerW,
          this.settings.timeFactor,
        ),
    );
    this.link = new CentralSystemLink(
      {
        endpoint: this.settings.url,
        identity: this.identity,
        password: this.settings.password,
        reconnect: this.settings.reconnect,
        callTimeoutMs: this.settings.callTimeoutMs,
      },
      {
        frame: (direction, message) => this.emit('frame', { direction, message }),
        dropped: (code, reason) => {
          if (this.active) this.emit('disconnected', { code, reason });
        },
        // The first 'open' of a session precedes the boot; later ones are reconnects.
        opened: () => {
          if (this.active && this.booted) this.defer(() => this.onReconnected());
        },
        lost: (code) => this.onConnectionLost(code),
        registerHandlers: (client) => this.registerHandlers(client),
      },
    );
  }

  get timeFactor(): number {
    return this.settings.timeFactor;
  }

  get connectorCount(): number {
    return this.connectors.length;
  }

  get isBooted(): boolean {
    return this.booted;
  }

  get sampleIntervalSeconds(): number {
    return this.configuration.getInteger('MeterValueSampleInterval');
  }

  get heartbeatIntervalSeconds(): number {
    return this.configuration.getInteger('HeartbeatInterval');
  }

  get connectionTimeoutSeconds(): number {
    return this.configuration.getInteger('ConnectionTimeOut');
  }

  get sampledMeasurands(): Measurand[] {
    return this.configuration.getMeasurands('MeterValuesSampledData');
  }

  /** Connects, boots (retrying while Pending/Rejected) and reports every connector's status. */
  async connect(): Promise<void> {
    if (this.active) throw new Error(`${this.identity} is already connected`);
    this.active = true;
    try {
      await this.link.open();
      await this.bootAndAnnounce();
    } catch (error) {
      await this.disconnect();
      throw error;
    }
  }

  /**
   * Switches the charge point off: stops every timer and energy flow and closes the socket.
   * Running transactions are ended with reason PowerLoss on the next connect(), as hardware does.
   */
  async disconnect(): Promise<void> {
    this.active = false;
    this.booted = false;
    this.link.abortCalls();
    this.timers.clearAll();
    for (const connector of this.connectors) {
      connector.pendingRemoteStart = undefined;
      connector.setPowered(false);
    }
    await this.closeSocket();
  }

  close(): Promise<void> {
    return this.disconnect();
  }

  // ---------------------------------------------------------------- connection and boot

  private onConnectionLost(code: number | undefined): void {
    if (!this.active) return;
    if (this.booted) this.warn(`connection closed for good (code ${String(code)})`);
    this.active = false;
    this.booted = false;
    this.timers.clearAll();
  }

  protected async closeSocket(): Promise<void> {
    try {
      await this.link.close();
    } catch (error) {
      this.warn('closing the socket failed', error);
    }
  }

  protected async bootAndAnnounce(): Promise<void> {
    await this.boot();
    for (const connector of this.connectors) {
      if (connector.transaction) await this.stopTransaction(connector, 'PowerLoss');
      connector.setPowered(true);
    }
    this.restartHeartbeat();
    this.restartClockAlignedSampling();
    await this.sendAllStatuses();
    await this.flushUndeliveredStops();
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

  private async boot(): Promise<void> {
    for (;;) {
      let retrySeconds = DEFAULT_BOOT_RETRY_SECONDS;
      try {
        const conf = await this.call('BootNotification', this.bootRequest());
        if (conf.interval > 0) retrySeconds = conf.interval;
        if (conf.status === 'Accepted') {
          if (conf.interval > 0) this.configuration.set('HeartbeatInterval', String(conf.interval));
          this.booted = true;
          return;
        }
        this.warn(`BootNotification ${conf.status}; retrying in ${retrySeconds} s`);
      } catch (error) {
        if (!this.active) throw error;
        this.warn('BootNotification failed; retrying', error);
      }
      const slept = await this.timers.sleep(retrySeconds);
      if (!slept || !this.active) throw new Error(`${this.identity} disconnected before boot`);
    }
  }

  private async onReconnected(): Promise<void> {
    this.emit('reconnected', { identity: this.identity });
    await this.sendAllStatuses();
    await this.flushUndeliveredStops();
  }

  // ---------------------------------------------------------------- outgoing messages

  private call<M extends keyof OutgoingCalls>(
    method: M,
    params: OutgoingCalls[M]['req'],
  ): Promise<OutgoingCalls[M]['conf']> {
    return this.link.call(method, params);
  }

  /** A call whose failure is only worth a warning (status, meter values, heartbeats). */
  protected async send<M extends keyof OutgoingCalls>(
    method: M,
    params: OutgoingCalls[M]['req'],
  ): Promise<OutgoingCalls[M]['conf'] | undefined> {
    try {
      return await this.call(method, params);
    } catch (error) {
      this.warn(`${method} failed`, error);
      return undefined;
    }
  }

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

  protected async sendMeterValues(
    connector: Connector,
    measurands: readonly Measurand[],
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
    await this.send('MeterValues', request);
    this.emit('meterValues', event);
  }

  private async flushUndeliveredStops(): Promise<void> {
    const pending = this.undeliveredStops.splice(0);
    for (const request of pending) await this.deliverStopTransaction(request);
  }

  private async deliverStopTransaction(request: StopTransactionRequest): Promise<void> {
    try {
      await this.call('StopTransaction', request);
    } catch (error) {
      // A CALLERROR means the central system refused it; resending would be refused again.
      if (this.active && !isRpcErrorResponse(error)) {
        this.undeliveredStops.push(request);
        this.warn(`StopTransaction ${request.transactionId} queued for redelivery`, error);
      } else {
        this.warn(`StopTransaction ${request.transactionId} failed`, error);
      }
    }
  }

  // ---------------------------------------------------------------- transactions

  protected async startTransaction(
    connector: Connector,
    idTag: string,
    remote: boolean,
  ): Promise<void> {
    if (connector.transaction || connector.starting || !connector.vehicle) return;
    connector.starting = true;
    let accepted: boolean;
    try {
      if (remote && this.configuration.getBoolean('AuthorizeRemoteTxRequests')) {
        const authorization = await this.call('Authorize', { idTag });
        if (authorization.idTagInfo.status !== 'Accepted') {
          this.warn(`idTag ${idTag} not authorized (${authorization.idTagInfo.status})`);
          return;
        }
      }
      const meterStart = connector.registerWh;
      const conf = await this.call('StartTransaction', {
        connectorId: connector.id,
        idTag,
        meterStart,
        timestamp: new Date().toISOString(),
      });
      connector.beginTransaction({ id: conf.transactionId, idTag, meterStart });
      accepted = conf.idTagInfo.status === 'Accepted';
      if (!accepted) this.warn(`StartTransaction answered ${conf.idTagInfo.status} for ${idTag}`);
    } catch (error) {
      this.warn(`StartTransaction on connector ${connector.id} failed`, error);
      return;
    } finally {
      connector.starting = false;
    }
    await this.afterTransactionStarted(connector, accepted);
  }

  private async afterTransactionStarted(connector: Connector, accepted: boolean): Promise<void> {
    const transaction = connector.transaction;
    if (!transaction) return;
    const started = {
      connectorId: connector.id,
      transactionId: transaction.id,
      idTag: transaction.idTag,
      meterStart: transaction.meterStart,
    };
    if (!connector.vehicle) {
      // Unplugged while the StartTransaction was in flight.
      this.emit('transactionStarted', started);
      await this.stopTransaction(connector, 'EVDisconnected');
      return;
    }
    if (!accepted && this.configuration.getBoolean('StopTransactionOnInvalidId')) {
      this.emit('transactionStarted', started);
      await this.stopTransaction(connector, 'DeAuthorized');
      return;
    }
    // With StopTransactionOnInvalidId=false the spec keeps the transaction but stops energy.
    const status = !accepted ? 'SuspendedEVSE' : connector.isFull ? 'SuspendedEV' : 'Charging';
    await this.changeStatus(connector, status);
    this.startSampling(connector);
    this.emit('transactionStarted', started);
  }

  protected async stopTransaction(connector: Connector, reason: StopReason): Promise<void> {
    this.timers.clear(`sample:${connector.id}`);
    // One instant for the final reading and the end of energy flow, so meterStop is exact.
    const now = performance.now();
    const reading = connector.reading(now);
    const transaction = connector.endTransaction(now);
    this.scheduleFullCheck(connector);
    if (!transaction) return;
    const timestamp = new Date();
    const measurands = this.configuration.getMeasurands('StopTxnSampledData');
    await this.deliverStopTransaction({
      transactionId: transaction.id,
      idTag: transaction.idTag,
      meterStop: reading.registerWh,
      timestamp: timestamp.toISOString(),
      reason,
      transactionData: [meterValue(reading, measurands, 'Transaction.End', timestamp)],
    });
    this.emit('transactionStopped', {
      connectorId: connector.id,
      transactionId: transaction.id,
      meterStop: reading.registerWh,
      reason,
    });
    await this.changeStatus(connector, 'Finishing');
    if (connector.scheduledAvailability) {
      connector.availability = connector.scheduledAvailability;
      connector.scheduledAvailability = undefined;
      if (connector.availability === 'Inoperative')
        await this.changeStatus(connector, 'Unavailable');
    }
  }

  protected async unplugVehicle(connector: Connector): Promise<void> {
    if (connector.transaction) await this.stopTransaction(connector, 'EVDisconnected');
    connector.unplug();
    this.timers.clear(`full:${connector.id}`);
    // A fault or a manual Unavailable outlasts the vehicle; everything else returns to idle.
    const sticky = connector.status === 'Faulted' || connector.status === 'Unavailable';
    if (!sticky) await this.changeStatus(connector, this.restingStatus(connector));
    this.emit('unplugged', { connectorId: connector.id });
  }

  protected startSampling(connector: Connector): void {
    const name = `sample:${connector.id}`;
    const interval = this.sampleIntervalSeconds;
    if (!this.active || !connector.transaction || interval <= 0) {
      this.timers.clear(name);
      return;
    }
    this.timers.every(name, interval, async () => {
      const transaction = connector.transaction;
      if (!transaction) return;
      await this.sendMeterValues(
        connector,
        this.sampledMeasurands,
        'Sample.Periodic',
        transaction.id,
      );
    });
  }

  /** Arms a timer for the instant the battery reaches 100 %, if energy is flowing. */
  private scheduleFullCheck(connector: Connector): void {
    const name = `full:${connector.id}`;
    const seconds = connector.simSecondsUntilFull();
    if (!this.active || seconds === undefined || !Number.isFinite(seconds)) {
      this.timers.clear(name);
      return;
    }
    this.timers.after(name, seconds, () => this.onFullCheck(connector));
  }

  private async onFullCheck(connector: Connector): Promise<void> {
    connector.accrue();
    if (!connector.isFull) {
      this.scheduleFullCheck(connector);
      return;
    }
    if (!connector.transaction) return;
    await this.changeStatus(connector, 'SuspendedEV');
    this.emit('vehicleFull', { connectorId: connector.id });
    if (this.settings.unplugWhenFull && connector.vehicle) await this.unplugVehicle(connector);
  }

  protected restartHeartbeat(): void {
    const interval = this.heartbeatIntervalSeconds;
    if (!this.active || interval <= 0) {
      this.timers.clear('heartbeat');
      return;
    }
    this.timers.every('heartbeat', interval, async () => {
      await this.send('Heartbeat', {});
      // A StopTransaction that timed out on an open socket gets another chance here.
      await this.flushUndeliveredStops();
    });
  }

  protected restartClockAlignedSampling(): void {
    const interval = this.configuration.getInteger('ClockAlignedDataInterval');
    if (!this.active || interval <= 0) {
      this.timers.clear('aligned');
      return;
    }
    const sendAligned = async (): Promise<void> => {
      const measurands = this.configuration.getMeasurands('MeterValuesAlignedData');
      for (const connector of this.connectors) {
        const transactionId = connector.transaction?.id;
        await this.sendMeterValues(connector, measurands, 'Sample.Clock', transactionId);
      }
    };
    // Aligned to the wall clock's midnight (exact when timeFactor is 1).
    const secondsSinceMidnight = (Date.now() / 1000) % 86_400;
    const firstDelay = interval - (secondsSinceMidnight % interval);
    this.timers.after('aligned', firstDelay, async () => {
      this.timers.every('aligned', interval, sendAligned);
      await sendAligned();
    });
  }

  /** Runs work that must follow our reply (e.g. StartTransaction after RemoteStart.conf). */
  protected defer(task: () => Promise<unknown>): void {
    // setImmediate runs after the microtasks in which ocpp-rpc sends the handler's result.
    setImmediate(() => {
      if (!this.active) return;
      task().catch((error: unknown) => this.warn('deferred task failed', error));
    });
  }

  // ---------------------------------------------------------------- helpers

  protected connector(connectorId: number): Connector {
    const connector = this.connectors[connectorId - 1];
    if (!connector || !Number.isInteger(connectorId)) {
      throw new RangeError(`connector ${connectorId} does not exist on ${this.identity}`);
    }
    return connector;
  }

  protected restingStatus(connector: Connector): ChargePointStatus {
    if (connector.availability === 'Inoperative') return 'Unavailable';
    return connector.vehicle ? 'Preparing' : 'Available';
  }

  protected warn(message: string, error?: unknown): void {
    // After disconnect() aborted in-flight calls their failures are expected noise.
    if (!this.active && error !== undefined) return;
    this.emit('warning', error === undefined ? { message } : { message, error });
  }

  /** Registers the handlers for calls from the central system on a new client. */
  protected abstract registerHandlers(client: RpcClient): void;
}
