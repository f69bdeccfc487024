import { downloadFile, simulatedLog, uploadFile, versionOf } from '../shared/file-transfer.js';
import { handlerRegistrar, NO_REPLY } from '../shared/rpc-client.js';
import type { RpcClient } from '../shared/rpc-client.js';
import type { Connector } from './connector.js';
import type { DiagnosticsStatus, FirmwareStatus, IncomingCalls, StopReason } from './ocpp-types.js';
import { costMessage } from './cost-screen.js';
import { LocalAuthorization16 } from './local-authorization.js';
import { ChargePointTransactions } from './transactions.js';

type Conf<M extends keyof IncomingCalls> = Promise<IncomingCalls[M]['conf'] | typeof NO_REPLY>;

/** How the charge point answers calls from the central system (OCPP 1.6 Core + RemoteTrigger). */
export abstract class CentralSystemRequests extends ChargePointTransactions {
  /** The local authorization list (Local Auth List Management profile). */
  readonly localAuthorization = new LocalAuthorization16(this.configuration);

  protected registerHandlers(client: RpcClient): void {
    const handleCall = handlerRegistrar<IncomingCalls>(client, (method, result) =>
      this.wire.result(method, result),
    );
    handleCall('RemoteStartTransaction', (params) => this.onRemoteStart(params));
    handleCall('RemoteStopTransaction', (params) => this.onRemoteStop(params));
    handleCall('ChangeConfiguration', (params) => this.onChangeConfiguration(params));
    handleCall('GetConfiguration', async ({ key }) => this.configuration.describe(key));
    handleCall('TriggerMessage', (params) => this.onTriggerMessage(params));
    handleCall('Reset', (params) => this.onReset(params));
    handleCall('UnlockConnector', (params) => this.onUnlockConnector(params));
    handleCall('ChangeAvailability', (params) => this.onChangeAvailability(params));
    handleCall('DataTransfer', async (params) =>
      costMessage(params, this.settings.personality.has('cost-screen'), (e) =>
        this.emit('screen', e),
      ),
    );
    handleCall('ClearCache', async () => ({ status: 'Accepted' }));
    handleCall('SendLocalList', (req) => this.localAuthorization.sendLocalList(req));
    handleCall('GetLocalListVersion', () => this.localAuthorization.getLocalListVersion());
    handleCall('UpdateFirmware', async ({ location }) => {
      this.defer(() => this.updateFirmware(location));
      return {};
    });
    handleCall('GetDiagnostics', async ({ location }) => {
      const fileName = `${this.identity}-diagnostics.log`.replace(/[^A-Za-z0-9._-]/g, '_');
      this.defer(() => this.uploadDiagnostics(location, fileName));
      return { fileName };
    });
    if (!this.smartCharging) return;
    handleCall('SetChargingProfile', (params) => this.onSetChargingProfile(params));
    handleCall('ClearChargingProfile', async (params) => ({
      status: this.clearChargingProfiles({
        ...(params.id === undefined ? {} : { id: params.id }),
        ...(params.connectorId === undefined ? {} : { outletId: params.connectorId }),
        ...(params.chargingProfilePurpose === undefined
          ? {}
          : { purpose: params.chargingProfilePurpose }),
        ...(params.stackLevel === undefined ? {} : { stackLevel: params.stackLevel }),
      }),
    }));
    handleCall('GetCompositeSchedule', async ({ connectorId, duration, chargingRateUnit }) => {
      const schedule = this.compositeSchedule(connectorId, duration, chargingRateUnit);
      if (!schedule) return { status: 'Rejected' };
      const { scheduleStart, ...rest } = schedule;
      return {
        status: 'Accepted',
        connectorId,
        scheduleStart,
        chargingSchedule: { ...rest, startSchedule: scheduleStart },
      };
    });
  }

  protected transactionRefOf(connector: Connector): number | undefined {
    return connector.transaction?.id;
  }

  private async onSetChargingProfile({
    connectorId,
    csChargingProfiles: profile,
  }: IncomingCalls['SetChargingProfile']['req']): Conf<'SetChargingProfile'> {
    // Firmware handles frames in order: a StartTransaction.conf that arrived just before this
    // call (often in the same TCP segment) has assigned the transaction id it may name.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const targets =
      connectorId === 0 ? this.connectors : this.connectors.filter((c) => c.id === connectorId);
    const status = this.answerChargingProfile(connectorId, targets, {
      id: profile.chargingProfileId,
      purpose: profile.chargingProfilePurpose,
      stackLevel: profile.stackLevel,
      kind: profile.chargingProfileKind,
      ...(profile.recurrencyKind === undefined ? {} : { recurrencyKind: profile.recurrencyKind }),
      ...(profile.transactionId === undefined ? {} : { transactionId: profile.transactionId }),
      schedule: profile.chargingSchedule,
    });
    return { status };
  }

  private canRemoteStart(connector: Connector): boolean {
    return (
      (connector.status === 'Available' || connector.status === 'Preparing') &&
      connector.availability === 'Operative' &&
      !connector.transaction &&
      !connector.starting &&
      !connector.pendingRemoteStart
    );
  }

  private remoteStartTarget(connectorId: number | undefined): Connector | undefined {
    if (this.mainStatus === 'Unavailable' || this.mainStatus === 'Faulted') return undefined;
    const candidates =
      connectorId === undefined
        ? this.connectors
        : this.connectors.filter((c) => c.id === connectorId);
    const free = candidates.filter((connector) => this.canRemoteStart(connector));
    // Without a connectorId, the driver is presumably at the connector that has a car plugged in.
    return free.find((connector) => connector.vehicle !== undefined) ?? free[0];
  }

  private async onRemoteStart({
    idTag,
    connectorId,
  }: IncomingCalls['RemoteStartTransaction']['req']): Conf<'RemoteStartTransaction'> {
    if (this.settings.remoteStart === 'ignore') {
      this.emit('remoteStart', { connectorId, idTag, status: 'Ignored' });
      return NO_REPLY;
    }
    const target =
      this.settings.remoteStart === 'accept' ? this.remoteStartTarget(connectorId) : undefined;
    const status = target ? 'Accepted' : 'Rejected';
    if (target) {
      // Reserved synchronously so a second RemoteStart cannot claim the same connector.
      target.pendingRemoteStart = { idTag };
      this.defer(() => this.proceedWithRemoteStart(target, idTag));
    }
    this.emit('remoteStart', { connectorId: target?.id ?? connectorId, idTag, status });
    return { status };
  }

  private async proceedWithRemoteStart(connector: Connector, idTag: string): Promise<void> {
    // plugIn() may already have consumed the reservation.
    if (connector.pendingRemoteStart?.idTag !== idTag) return;
    if (connector.vehicle) {
      connector.pendingRemoteStart = undefined;
      await this.startTransaction(connector, idTag, true);
      return;
    }
    await this.changeStatus(connector, 'Preparing');
    this.timers.after(`connectionTimeout:${connector.id}`, this.connectionTimeoutSeconds, () =>
      this.onConnectionTimeout(connector),
    );
  }

  protected async onConnectionTimeout(connector: Connector): Promise<void> {
    if (!connector.pendingRemoteStart) return;
    connector.pendingRemoteStart = undefined;
    if (!connector.vehicle && !connector.transaction && connector.status === 'Preparing') {
      await this.changeStatus(connector, this.restingStatus(connector));
    }
    this.warn(`connector ${connector.id}: no vehicle within ConnectionTimeOut; the start lapsed`);
  }

  private async onRemoteStop({
    transactionId,
  }: IncomingCalls['RemoteStopTransaction']['req']): Conf<'RemoteStopTransaction'> {
    const connector = this.connectors.find((c) => c.transaction?.id === transactionId);
    const personality = this.settings.personality;
    const status = connector && !personality.has('rejects-stop') ? 'Accepted' : 'Rejected';
    // Firmware that acknowledges the stop and keeps charging, as seen in the field.
    if (connector && status === 'Accepted' && !personality.has('ignores-stop')) {
      this.defer(async () => {
        if (connector.transaction?.id === transactionId) {
          await this.stopTransaction(connector, 'Remote');
        }
      });
    }
    this.emit('remoteStop', { transactionId, status });
    return { status };
  }

  private async onChangeConfiguration({
    key,
    value,
  }: IncomingCalls['ChangeConfiguration']['req']): Conf<'ChangeConfiguration'> {
    // Write-only, so not in the configuration store: the password's 16 to 20 bytes in hex.
    if (key.toLowerCase() === 'authorizationkey') {
      if (!/^(?:[0-9a-fA-F]{2}){16,20}$/.test(value)) return { status: 'Rejected' };
      this.changePassword(Buffer.from(value, 'hex').toString('utf8'));
      return { status: 'Accepted' };
    }
    const status = this.configuration.change(key, value);
    const name = this.configuration.canonicalName(key);
    if (status !== 'Accepted' || name === undefined) return { status };
    if (name === 'HeartbeatInterval') this.restartHeartbeat();
    if (name === 'ClockAlignedDataInterval') this.restartClockAlignedSampling();
    if (name === 'MeterValueSampleInterval') {
      for (const connector of this.connectors) this.startSampling(connector);
    }
    this.emit('configurationChanged', { key: name, value: this.configuration.get(name) ?? value });
    return { status };
  }

  private async onTriggerMessage({
    requestedMessage,
    connectorId,
  }: IncomingCalls['TriggerMessage']['req']): Conf<'TriggerMessage'> {
    if (connectorId !== undefined && (connectorId < 0 || connectorId > this.connectors.length)) {
      return { status: 'Rejected' };
    }
    switch (requestedMessage) {
      case 'BootNotification':
        this.defer(() => this.sendTriggeredBoot());
        break;
      case 'Heartbeat':
        this.defer(() => this.send('Heartbeat', {}));
        break;
      case 'StatusNotification':
        this.defer(() => this.sendTriggeredStatus(connectorId));
        break;
      case 'MeterValues':
        this.defer(() => this.sendTriggeredMeterValues(connectorId));
        break;
      default:
        return { status: 'NotImplemented' };
    }
    return { status: 'Accepted' };
  }

  private async sendTriggeredBoot(): Promise<void> {
    const conf = await this.send('BootNotification', this.bootRequest());
    if (conf?.status === 'Accepted' && conf.interval > 0) {
      this.configuration.set('HeartbeatInterval', String(conf.interval));
      this.restartHeartbeat();
    }
  }

  private async sendTriggeredStatus(connectorId: number | undefined): Promise<void> {
    if (connectorId === undefined) return this.sendAllStatuses();
    if (connectorId === 0) return this.notifyStatus(0, this.mainStatus, this.mainErrorCode);
    const connector = this.connector(connectorId);
    await this.notifyStatus(connectorId, connector.status, connector.errorCode);
  }

  private async sendTriggeredMeterValues(connectorId: number | undefined): Promise<void> {
    const targets =
      connectorId === undefined || connectorId === 0
        ? this.connectors
        : [this.connector(connectorId)];
    for (const connector of targets) {
      const transactionId = connector.transaction?.id;
      await this.sendMeterValues(connector, this.sampledMeasurands, 'Trigger', transactionId);
    }
  }

  private async onReset({ type }: IncomingCalls['Reset']['req']): Conf<'Reset'> {
    this.emit('reset', { type });
    this.defer(() => this.resetAndReboot(type === 'Soft' ? 'SoftReset' : 'HardReset'));
    return { status: 'Accepted' };
  }

  private async onUnlockConnector({
    connectorId,
  }: IncomingCalls['UnlockConnector']['req']): Conf<'UnlockConnector'> {
    const connector = this.connectors.find((c) => c.id === connectorId);
    const lock = this.locks.of(connectorId);
    if (!connector || lock === 'fixed-cable') return { status: 'NotSupported' };
    const transactionId = connector.transaction?.id;
    if (transactionId !== undefined) {
      this.defer(async () => {
        if (connector.transaction?.id === transactionId) {
          await this.stopTransaction(connector, 'UnlockCommand');
        }
      });
    }
    return { status: lock === 'jammed' ? 'UnlockFailed' : 'Unlocked' };
  }

  private async onChangeAvailability({
    connectorId,
    type,
  }: IncomingCalls['ChangeAvailability']['req']): Conf<'ChangeAvailability'> {
    if (connectorId < 0 || connectorId > this.connectors.length) return { status: 'Rejected' };
    const targets =
      connectorId === 0 ? this.connectors : this.connectors.filter((c) => c.id === connectorId);
    let scheduled = false;
    for (const connector of targets) {
      if (connector.transaction && type === 'Inoperative') {
        connector.scheduledAvailability = type;
        scheduled = true;
      } else {
        connector.availability = type;
        connector.scheduledAvailability = undefined;
      }
    }
    if (connectorId === 0) this.mainAvailability = type;
    this.defer(async () => {
      if (connectorId === 0) {
        this.mainStatus = type === 'Inoperative' ? 'Unavailable' : 'Available';
        await this.notifyStatus(0, this.mainStatus, this.mainErrorCode);
      }
      for (const connector of targets) {
        if (!connector.transaction)
          await this.changeStatus(connector, this.restingStatus(connector));
      }
    });
    return { status: scheduled ? 'Scheduled' : 'Accepted' };
  }

  /** TC_044: Downloading, Downloaded, Installing, a reboot, then Installed on the new version. */
  private async updateFirmware(location: string): Promise<void> {
    const status = (s: FirmwareStatus) => this.send('FirmwareStatusNotification', { status: s });
    await status('Downloading');
    try {
      await downloadFile(location);
    } catch (error) {
      this.warn('firmware download failed', error);
      await status('DownloadFailed');
      return;
    }
    await status('Downloaded');
    await status('Installing');
    this.settings.firmwareVersion = versionOf(location, 50);
    await this.resetAndReboot('Reboot');
    await status('Installed');
  }

  /** TC_045: Uploading, then Uploaded or UploadFailed; the file goes up as multipart/form-data. */
  private async uploadDiagnostics(location: string, fileName: string): Promise<void> {
    await this.send('DiagnosticsStatusNotification', { status: 'Uploading' });
    let status: DiagnosticsStatus = 'Uploaded';
    try {
      const log = simulatedLog(this.identity, this.settings.firmwareVersion);
      await uploadFile(location, fileName, log, 'multipart');
    } catch (error) {
      this.warn('diagnostics upload failed', error);
      status = 'UploadFailed';
    }
    await this.send('DiagnosticsStatusNotification', { status });
  }

  private resetAndReboot(reason: StopReason): Promise<void> {
    return this.reboot(async () => {
      for (const connector of this.connectors) {
        if (!connector.transaction) continue;
        if (this.settings.personality.has('forgets-transaction-on-reboot')) {
          this.forgetTransaction(connector);
        } else await this.stopTransaction(connector, reason);
      }
    });
  }
}
