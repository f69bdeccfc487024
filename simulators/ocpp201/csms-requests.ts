import { downloadFile, simulatedLog, uploadFile, versionOf } from '../shared/file-transfer.js';
import { handlerRegistrar } from '../shared/rpc-client.js';
import type { RpcClient } from '../shared/rpc-client.js';
import type { Evse } from './evse.js';
import type { SetVariableResult } from './ocpp-types.js';
import type { FirmwareStatus, IncomingCalls, UploadLogStatus } from './ocpp-messages.js';
import { screenCalls } from './cost-screen.js';
import { LocalAuthorization201 } from './local-authorization.js';
import { RemoteControl } from './remote-control.js';
import type { Conf } from './remote-control.js';

// Report entries per NotifyReport message; several messages show the CSMS the seqNo/tbc chain.
const REPORT_PAGE_SIZE = 5;

/** How the station answers the CSMS (the 2.0.1 Core profile and a little of the rest). */
export abstract class CsmsRequests extends RemoteControl {
  /** The local authorization list (LocalAuthListCtrlr). */
  readonly localAuthorization = new LocalAuthorization201(this.deviceModel);
  private resetWhenIdle = false;

  protected registerHandlers(client: RpcClient): void {
    const handle = handlerRegistrar<IncomingCalls>(client, (method, result) =>
      this.wire.result(method, result),
    );
    handle('RequestStartTransaction', (params) => this.onRequestStart(params));
    handle('RequestStopTransaction', (params) => this.onRequestStop(params));
    handle('GetVariables', async ({ getVariableData }) => ({
      getVariableResult: getVariableData.map(({ component, variable, attributeType }) =>
        this.deviceModel.read(component, variable, attributeType),
      ),
    }));
    handle('SetVariables', (params) => this.onSetVariables(params));
    handle('GetBaseReport', (params) => this.onGetBaseReport(params));
    handle('Reset', (params) => this.onReset(params));
    handle('TriggerMessage', (params) => this.onTriggerMessage(params));
    handle('ChangeAvailability', (params) => this.onChangeAvailability(params));
    handle('UnlockConnector', (params) => this.onUnlockConnector(params));
    handle('GetTransactionStatus', async ({ transactionId }) => ({
      messagesInQueue: this.transactionEvents.hasQueued(transactionId),
      ...(transactionId === undefined
        ? {}
        : { ongoingIndicator: this.evses.some((evse) => evse.transaction?.id === transactionId) }),
    }));
    handle('DataTransfer', async () => ({ status: 'UnknownVendorId' }));
    if (this.settings.personality.has('cost-screen')) {
      const calls = screenCalls((event) => this.emit('screen', event));
      handle('SetDisplayMessage', calls.SetDisplayMessage);
      handle('CostUpdated', calls.CostUpdated);
    }
    handle('ClearCache', async () => ({ status: 'Accepted' }));
    handle('SendLocalList', (req) => this.localAuthorization.sendLocalList(req));
    handle('GetLocalListVersion', () => this.localAuthorization.getLocalListVersion());
    handle('UpdateFirmware', async ({ requestId, firmware }) => {
      this.defer(() => this.updateFirmware(requestId, firmware.location));
      return { status: 'Accepted' };
    });
    handle('GetLog', async ({ requestId, log, logType }) => {
      if (logType !== 'DiagnosticsLog') return { status: 'Rejected' };
      const filename = `${this.identity}-log.txt`.replace(/[^A-Za-z0-9._-]/g, '_');
      this.defer(() => this.uploadLog(requestId, log.remoteLocation, filename));
      return { status: 'Accepted', filename };
    });
    if (!this.smartCharging) return;
    handle('SetChargingProfile', (params) => this.onSetChargingProfile(params));
    handle(
      'ClearChargingProfile',
      async ({ chargingProfileId: id, chargingProfileCriteria: c }) => ({
        status: this.clearChargingProfiles({
          ...(id === undefined ? {} : { id }),
          ...(c?.evseId === undefined ? {} : { outletId: c.evseId }),
          ...(c?.chargingProfilePurpose === undefined ? {} : { purpose: c.chargingProfilePurpose }),
          ...(c?.stackLevel === undefined ? {} : { stackLevel: c.stackLevel }),
        }),
      }),
    );
    handle('GetCompositeSchedule', async ({ evseId, duration, chargingRateUnit }) => {
      const schedule = this.compositeSchedule(evseId, duration, chargingRateUnit);
      return schedule
        ? { status: 'Accepted', schedule: { evseId, ...schedule } }
        : { status: 'Rejected' };
    });
  }

  protected transactionRefOf(evse: Evse): string | undefined {
    return evse.transaction?.id;
  }

  private async onSetChargingProfile({
    evseId,
    chargingProfile: profile,
  }: IncomingCalls['SetChargingProfile']['req']): Conf<'SetChargingProfile'> {
    const [schedule] = profile.chargingSchedule;
    if (!schedule) return { status: 'Rejected' };
    // 2.1 lets a period go without a limit (setpoints, discharging), which this station lacks.
    const periods: { limit?: number }[] = schedule.chargingSchedulePeriod;
    if (periods.some((period) => period.limit === undefined)) return { status: 'Rejected' };
    const status = this.answerChargingProfile(evseId, this.targets(evseId), {
      id: profile.id,
      purpose: profile.chargingProfilePurpose,
      stackLevel: profile.stackLevel,
      kind: profile.chargingProfileKind,
      ...(profile.recurrencyKind === undefined ? {} : { recurrencyKind: profile.recurrencyKind }),
      ...(profile.transactionId === undefined ? {} : { transactionId: profile.transactionId }),
      schedule,
    });
    return { status };
  }

  private async onSetVariables({
    setVariableData,
  }: IncomingCalls['SetVariables']['req']): Conf<'SetVariables'> {
    const changed: string[] = [];
    const setVariableResult = setVariableData.map(
      ({ component, variable, attributeValue, attributeType }): SetVariableResult => {
        const password =
          component.name === 'SecurityCtrlr' && variable.name === 'BasicAuthPassword';
        const status = password
          ? this.takeBasicAuthPassword(attributeValue)
          : this.deviceModel.write(component, variable, attributeValue, attributeType);
        if (status === 'Accepted' && !password) changed.push(`${component.name}.${variable.name}`);
        return {
          attributeStatus: status,
          component,
          variable,
          ...(attributeType ? { attributeType } : {}),
        };
      },
    );
    for (const key of changed) this.applyVariable(key);
    return { setVariableResult };
  }

  /** Write-only, so not in the device model: 16 to 40 printable characters (A01). */
  private takeBasicAuthPassword(value: string): 'Accepted' | 'Rejected' {
    if (!/^[\x21-\x7E]{16,40}$/.test(value)) return 'Rejected';
    this.changePassword(value);
    return 'Accepted';
  }

  private applyVariable(key: string): void {
    const [component = '', variable = ''] = key.split('.');
    if (key === 'OCPPCommCtrlr.HeartbeatInterval') this.restartHeartbeat();
    if (key === 'AlignedDataCtrlr.Interval') this.restartAlignedSampling();
    if (key === 'SampledDataCtrlr.TxUpdatedInterval') {
      for (const evse of this.evses) this.startSampling(evse);
    }
    this.emit('configurationChanged', { key, value: this.deviceModel.get(component, variable) });
  }

  private async onGetBaseReport({
    requestId,
  }: IncomingCalls['GetBaseReport']['req']): Conf<'GetBaseReport'> {
    this.defer(async () => {
      const entries = this.deviceModel.report();
      const pages = Math.ceil(entries.length / REPORT_PAGE_SIZE);
      for (let seqNo = 0; seqNo < pages; seqNo++) {
        const start = seqNo * REPORT_PAGE_SIZE;
        await this.send('NotifyReport', {
          requestId,
          generatedAt: new Date().toISOString(),
          seqNo,
          tbc: seqNo < pages - 1,
          reportData: entries.slice(start, start + REPORT_PAGE_SIZE),
        });
      }
    });
    return { status: 'Accepted' };
  }

  private async onReset({ type, evseId }: IncomingCalls['Reset']['req']): Conf<'Reset'> {
    // Resetting a single EVSE is optional in 2.0.1; this station only resets as a whole.
    if (evseId !== undefined) return { status: 'Rejected' };
    this.emit('reset', { type });
    if (type === 'OnIdle' && this.evses.some((evse) => evse.transaction)) {
      this.resetWhenIdle = true;
      return { status: 'Scheduled' };
    }
    this.defer(() => this.resetNow());
    return { status: 'Accepted' };
  }

  protected onTransactionEnded(): void {
    if (!this.resetWhenIdle || this.evses.some((evse) => evse.transaction)) return;
    this.resetWhenIdle = false;
    this.defer(() => this.resetNow());
  }

  /**
   * TC_L_01 without signatures: Downloading, Downloaded, Installing, InstallRebooting, a reboot
   * (BootNotification reason FirmwareUpdate), then Installed on the new version.
   */
  private async updateFirmware(requestId: number, location: string): Promise<void> {
    const status = (s: FirmwareStatus) =>
      this.send('FirmwareStatusNotification', { status: s, requestId });
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
    await status('InstallRebooting');
    this.settings.firmwareVersion = versionOf(location, 50);
    this.bootReason = 'FirmwareUpdate';
    await this.reboot(async () => {
      for (const evse of this.evses) {
        if (evse.transaction) await this.endTransaction(evse, 'ImmediateReset', 'ResetCommand');
      }
    });
    await status('Installed');
  }

  /** TC_N_25: Uploading, then Uploaded or UploadFailure; the log goes up as a raw PUT. */
  private async uploadLog(requestId: number, location: string, filename: string): Promise<void> {
    await this.send('LogStatusNotification', { status: 'Uploading', requestId });
    let status: UploadLogStatus = 'Uploaded';
    try {
      const log = simulatedLog(this.identity, this.settings.firmwareVersion);
      await uploadFile(location, filename, log, 'put');
    } catch (error) {
      this.warn('log upload failed', error);
      status = 'UploadFailure';
    }
    await this.send('LogStatusNotification', { status, requestId });
  }

  private resetNow(): Promise<void> {
    this.bootReason = 'RemoteReset';
    this.resetWhenIdle = false;
    return this.reboot(async () => {
      for (const evse of this.evses) {
        if (!evse.transaction) continue;
        if (this.settings.personality.has('forgets-transaction-on-reboot')) {
          this.forgetTransaction(evse);
        } else await this.endTransaction(evse, 'ImmediateReset', 'ResetCommand');
      }
    });
  }

  /** The EVSEs a request names (evse absent or id 0: the whole station); undefined if unknown. */
  private targets(evseId: number | undefined): readonly Evse[] | undefined {
    if (evseId === undefined || evseId === 0) return this.evses;
    const evse = this.evses.find((candidate) => candidate.id === evseId);
    return evse ? [evse] : undefined;
  }

  private async onTriggerMessage({
    requestedMessage,
    evse,
  }: IncomingCalls['TriggerMessage']['req']): Conf<'TriggerMessage'> {
    const targets = this.targets(evse?.id);
    if (!targets) return { status: 'Rejected' };
    switch (requestedMessage) {
      case 'BootNotification':
        this.defer(() => this.sendTriggeredBoot());
        break;
      case 'Heartbeat':
        this.defer(() => this.send('Heartbeat', {}));
        break;
      case 'StatusNotification':
        this.defer(async () => {
          for (const target of targets) await this.notifyStatus(target);
        });
        break;
      case 'MeterValues': {
        const measurands = this.deviceModel.getMeasurands('AlignedDataCtrlr', 'Measurands');
        this.defer(async () => {
          for (const target of targets) await this.sendMeterValues(target, measurands, 'Trigger');
        });
        break;
      }
      case 'TransactionEvent': {
        const running = targets.filter((target) => target.transaction);
        if (running.length === 0) return { status: 'Rejected' };
        this.defer(async () => {
          for (const target of running) {
            await this.sendTransactionSample(target, this.sampledMeasurands, 'Trigger');
          }
        });
        break;
      }
      default:
        return { status: 'NotImplemented' };
    }
    return { status: 'Accepted' };
  }

  private async sendTriggeredBoot(): Promise<void> {
    const conf = await this.send('BootNotification', this.bootRequest('Triggered'));
    if (conf?.status === 'Accepted' && conf.interval > 0) {
      this.setHeartbeatInterval(conf.interval);
      this.restartHeartbeat();
    }
  }

  private async onChangeAvailability({
    evse,
    operationalStatus,
  }: IncomingCalls['ChangeAvailability']['req']): Conf<'ChangeAvailability'> {
    const targets = this.targets(evse?.id);
    if (!targets) return { status: 'Rejected' };
    let scheduled = false;
    for (const target of targets) {
      if (target.transaction && operationalStatus === 'Inoperative') {
        target.scheduledAvailability = operationalStatus;
        scheduled = true;
      } else {
        target.availability = operationalStatus;
        target.scheduledAvailability = undefined;
      }
    }
    if (evse === undefined || evse.id === 0) this.stationAvailability = operationalStatus;
    this.defer(async () => {
      for (const target of targets) {
        if (!target.transaction) await this.changeStatus(target, this.restingStatus(target));
      }
    });
    return { status: scheduled ? 'Scheduled' : 'Accepted' };
  }

  private async onUnlockConnector({
    evseId,
    connectorId,
  }: IncomingCalls['UnlockConnector']['req']): Conf<'UnlockConnector'> {
    const evse = this.evses.find((candidate) => candidate.id === evseId);
    if (!evse || connectorId !== 1) return { status: 'UnknownConnector' };
    // The spec forbids unlocking under an authorized transaction; the CSMS must stop it first.
    if (evse.transaction?.authorization) return { status: 'OngoingAuthorizedTransaction' };
    return { status: this.locks.of(evseId) === 'lock' ? 'Unlocked' : 'UnlockFailed' };
  }
}
