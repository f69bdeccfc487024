import { ChargePointCore } from './charge-point-core.js';
import type { Connector } from './connector.js';
import { QUEUED_BURST_SAMPLES } from '../shared/personalities.js';
import { meterValue } from './meter-sampling.js';
import type { OutgoingCalls, StopReason } from './ocpp-types.js';

/**
 * The 1.6 transaction lifecycle: StartTransaction (after an optional Authorize), periodic and
 * clock-aligned meter values, StopTransaction with the exact final register, and the vehicle
 * reaching 100 %.
 */
export abstract class ChargePointTransactions extends ChargePointCore {
  protected async startTransaction(
    connector: Connector,
    idTag: string,
    remote: boolean,
  ): Promise<void> {
    if (connector.transaction || connector.starting || !connector.vehicle) return;
    connector.starting = true;
    let accepted: boolean;
    if (this.transactionMessages.mustQueue) {
      // Offline: the remote start was accepted while online, so the transaction starts now under
      // a provisional id and its StartTransaction waits for the link, as real chargers do.
      const request = {
        connectorId: connector.id,
        idTag,
        meterStart: connector.registerWh,
        timestamp: new Date().toISOString(),
      };
      const id = this.transactionMessages.queueStart(request);
      connector.beginTransaction({ id, idTag, meterStart: request.meterStart });
      this.transactionBegan(connector);
      connector.starting = false;
      this.warn(`StartTransaction on connector ${connector.id} queued while offline (id ${id})`);
      await this.afterTransactionStarted(connector, true);
      return;
    }
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
        // A meter with a decimal display reports the fraction the integer register drops.
        meterStart: this.settings.personality.has('decimal-meter-start')
          ? connector.registerTenthsWh
          : meterStart,
        timestamp: new Date().toISOString(),
      });
      connector.beginTransaction({ id: conf.transactionId, idTag, meterStart });
      this.transactionBegan(connector);
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

  protected onTransactionIdAssigned(
    provisionalId: number,
    conf: OutgoingCalls['StartTransaction']['conf'],
  ): void {
    const connector = this.connectors.find((c) => c.transaction?.id === provisionalId);
    if (!connector?.transaction) return;
    connector.transaction.id = conf.transactionId;
    if (
      conf.idTagInfo.status !== 'Accepted' &&
      this.configuration.getBoolean('StopTransactionOnInvalidId')
    ) {
      this.defer(() => this.stopTransaction(connector, 'DeAuthorized'));
    }
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
    if (this.settings.personality.has('queued-burst')) this.heldSamples = QUEUED_BURST_SAMPLES;
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
    this.transactionEnded(connector);
    const timestamp = new Date();
    const measurands = this.configuration.getMeasurands('StopTxnSampledData');
    // The spec's sequence: Finishing when the transaction stops, before StopTransaction goes out.
    const lateFinishing = this.settings.personality.has('late-finishing');
    if (!lateFinishing) await this.changeStatus(connector, 'Finishing');
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
    if (lateFinishing) await this.changeStatus(connector, 'Finishing');
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
  protected scheduleFullCheck(connector: Connector): void {
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
}
