import { reportedSoc } from '../shared/meter-reading.js';
import type { SimMeasurand } from '../shared/meter-reading.js';
import type { Evse } from './evse.js';
import { meterValue } from './meter-values.js';
import type { ReadingContext, TriggerReason } from './ocpp-types.js';
import { TransactionLifecycle } from './transaction-lifecycle.js';

/**
 * Meter values during transactions (TransactionEvent Updated, periodic and clock-aligned) and
 * the vehicle reaching 100 %. Sampling runs on simulated time and continues while offline: the
 * queue keeps the samples for the reconnect.
 */
export abstract class TransactionMetering extends TransactionLifecycle {
  get sampleIntervalSeconds(): number {
    return this.deviceModel.getInteger('SampledDataCtrlr', 'TxUpdatedInterval');
  }

  get sampledMeasurands(): SimMeasurand[] {
    return this.deviceModel.getMeasurands('SampledDataCtrlr', 'TxUpdatedMeasurands');
  }

  /** (Re)starts the TxUpdatedInterval samples of the EVSE's transaction. */
  protected startSampling(evse: Evse): void {
    const name = `sample:${evse.id}`;
    const interval = this.sampleIntervalSeconds;
    if (!this.active || !evse.transaction || interval <= 0) {
      this.timers.clear(name);
      return;
    }
    this.timers.every(name, interval, () =>
      this.sendTransactionSample(evse, this.sampledMeasurands, 'Sample.Periodic'),
    );
  }

  /** An Updated event with meter values; the trigger reason follows from the context. */
  protected async sendTransactionSample(
    evse: Evse,
    measurands: readonly SimMeasurand[],
    context: ReadingContext,
  ): Promise<void> {
    const tx = evse.transaction;
    if (!tx) return;
    const reading = evse.reading();
    const triggerReason: TriggerReason =
      context === 'Sample.Clock'
        ? 'MeterValueClock'
        : context === 'Trigger'
          ? 'Trigger'
          : 'MeterValuePeriodic';
    // queued-burst: the last held sample brings the link "back" and the queue goes in a burst.
    if (this.heldSamples > 0) this.heldSamples -= 1;
    await this.sendTransactionEvent(tx, 'Updated', triggerReason, {
      meterValue: [meterValue(reading, measurands, context, new Date())],
    });
    this.emit('meterValues', {
      connectorId: evse.id,
      transactionId: tx.id,
      registerWh: reading.registerWh,
      powerW: Math.round(reading.powerW),
      ...(reading.socPercent === undefined ? {} : { socPercent: reportedSoc(reading.socPercent) }),
    });
  }

  protected restartAlignedSampling(): void {
    const interval = this.deviceModel.getInteger('AlignedDataCtrlr', 'Interval');
    if (!this.active || interval <= 0) {
      this.timers.clear('aligned');
      return;
    }
    const sendAligned = async (): Promise<void> => {
      const measurands = this.deviceModel.getMeasurands('AlignedDataCtrlr', 'Measurands');
      for (const evse of this.evses) {
        if (evse.transaction) await this.sendTransactionSample(evse, measurands, 'Sample.Clock');
        else await this.sendMeterValues(evse, measurands, 'Sample.Clock');
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

  /** Arms a timer for the instant the battery reaches 100 %, if energy is flowing. */
  protected scheduleFullCheck(evse: Evse): void {
    const name = `full:${evse.id}`;
    const seconds = evse.simSecondsUntilFull();
    if (!this.active || seconds === undefined || !Number.isFinite(seconds)) {
      this.timers.clear(name);
      return;
    }
    this.timers.after(name, seconds, () => this.onFullCheck(evse));
  }

  private async onFullCheck(evse: Evse): Promise<void> {
    evse.accrue();
    if (!evse.isFull) {
      this.scheduleFullCheck(evse);
      return;
    }
    if (!evse.transaction) return;
    await this.updateChargingState(evse);
    this.emit('vehicleFull', { connectorId: evse.id });
    if (this.settings.unplugWhenFull && evse.vehicle) await this.unplugVehicle(evse);
  }
}
