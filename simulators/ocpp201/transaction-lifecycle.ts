import { randomUUID } from 'node:crypto';
import { showAnswer } from './cost-screen.js';
import type { StationStopReason } from './events.js';
import { authorizedBy } from './evse.js';
import type { Authorization, Evse, Transaction } from './evse.js';
import { meterValue } from './meter-values.js';
import type {
  EvseRef,
  IdToken,
  MeterValue,
  Reason,
  TransactionEventRequest,
  TransactionEventResponse,
  TriggerReason,
} from './ocpp-types.js';
import { QUEUED_BURST_SAMPLES } from '../shared/personalities.js';
import { StationCore } from './station-core.js';
import type { TxStartPoint } from './device-model.js';

/** What an event carries besides its type, trigger and seqNo. */
export interface EventExtras {
  evse?: EvseRef;
  idToken?: IdToken;
  remoteStartId?: number;
  stoppedReason?: Reason;
  meterValue?: MeterValue[];
}

/**
 * The 2.0.1 transaction lifecycle: Started (at TxStartPoint), authorization, charging-state
 * changes, deauthorization (respecting TxStopPoint) and Ended with the exact final register.
 * Every step is one TransactionEvent with the transaction's next seqNo, sent through the queue.
 */
export abstract class TransactionLifecycle extends StationCore {
  get txStartPoint(): TxStartPoint {
    return this.deviceModel.get('TxCtrlr', 'TxStartPoint') as TxStartPoint;
  }

  get connectionTimeoutSeconds(): number {
    return this.deviceModel.getInteger('TxCtrlr', 'EVConnectionTimeOut');
  }

  protected abstract startSampling(evse: Evse): void;
  /** Called after every Ended (a Reset OnIdle waits for this). */
  protected abstract onTransactionEnded(): void;

  protected transactionEvent(
    tx: Transaction,
    eventType: TransactionEventRequest['eventType'],
    triggerReason: TriggerReason,
    extras: EventExtras = {},
  ): TransactionEventRequest {
    const { stoppedReason, remoteStartId, ...fields } = extras;
    return {
      eventType,
      timestamp: new Date().toISOString(),
      triggerReason,
      seqNo: tx.nextSeqNo++,
      transactionInfo: {
        transactionId: tx.id,
        chargingState: tx.chargingState,
        ...(stoppedReason === undefined ? {} : { stoppedReason }),
        ...(remoteStartId === undefined ? {} : { remoteStartId }),
      },
      ...fields,
    };
  }

  /** Builds the event with the next seqNo and queues it (same tick, so seqNo order holds). */
  protected sendTransactionEvent(
    tx: Transaction,
    eventType: TransactionEventRequest['eventType'],
    triggerReason: TriggerReason,
    extras: EventExtras = {},
  ): Promise<void> {
    return this.transactionEvents.enqueue(
      this.transactionEvent(tx, eventType, triggerReason, extras),
    );
  }

  protected async startTransaction(
    evse: Evse,
    triggerReason: TriggerReason,
    authorization?: Authorization,
  ): Promise<void> {
    if (evse.transaction) return;
    // One instant for the first reading and the start of energy flow, so meterStart is exact.
    const now = performance.now();
    const reading = evse.reading(now);
    const tx: Transaction = {
      id: randomUUID(),
      authorization,
      meterStart: reading.registerWh,
      chargingState: 'Idle',
      nextSeqNo: 0,
      announced: false,
    };
    evse.beginTransaction(tx, now);
    this.transactionBegan(evse);
    evse.setChargingState(evse.impliedChargingState());
    const measurands = this.deviceModel.getMeasurands('SampledDataCtrlr', 'TxStartedMeasurands');
    await this.sendTransactionEvent(tx, 'Started', triggerReason, {
      evse: { id: evse.id, connectorId: 1 },
      ...(authorization ? { ...authorization } : {}),
      meterValue: [meterValue(reading, measurands, 'Transaction.Begin', new Date())],
    });
    if (this.settings.personality.has('queued-burst')) this.heldSamples = QUEUED_BURST_SAMPLES;
    this.startSampling(evse);
    this.scheduleFullCheck(evse);
    this.announceStarted(evse, tx);
  }

  /** A transaction started at EVConnected gets its idToken (RequestStartTransaction, a tap). */
  protected async authorizeTransaction(evse: Evse, authorization: Authorization): Promise<void> {
    const tx = evse.transaction;
    if (!tx || tx.authorization) return;
    evse.authorize(authorization);
    evse.setChargingState(evse.impliedChargingState());
    await this.sendTransactionEvent(tx, 'Updated', authorizedBy(authorization), {
      ...authorization,
    });
    this.scheduleFullCheck(evse);
    this.announceStarted(evse, tx);
  }

  /** Sends an Updated event if the charging state the situation implies has changed. */
  protected async updateChargingState(
    evse: Evse,
    triggerReason: TriggerReason = 'ChargingStateChanged',
  ): Promise<void> {
    const tx = evse.transaction;
    const next = evse.impliedChargingState();
    if (!tx || next === tx.chargingState) return;
    evse.setChargingState(next);
    await this.sendTransactionEvent(tx, 'Updated', triggerReason);
    this.scheduleFullCheck(evse);
  }

  /**
   * The driver or the CSMS withdrew the authorization. The transaction ends, unless TxStopPoint
   * is EVConnected alone: then energy stops and the transaction ends when the EV leaves.
   */
  protected async deauthorize(
    evse: Evse,
    reason: StationStopReason,
    triggerReason: TriggerReason,
  ): Promise<void> {
    const tx = evse.transaction;
    if (!tx || tx.endOnUnplug) return;
    const stopPoints = this.deviceModel.getList('TxCtrlr', 'TxStopPoint');
    const untilUnplug = evse.vehicle !== undefined && stopPoints.every((p) => p === 'EVConnected');
    if (!untilUnplug || stopPoints.length === 0) {
      await this.endTransaction(evse, reason, triggerReason);
      return;
    }
    evse.deauthorizeUntilUnplug(reason);
    await this.sendTransactionEvent(tx, 'Updated', triggerReason);
    this.scheduleFullCheck(evse);
  }

  protected async endTransaction(
    evse: Evse,
    reason: StationStopReason,
    triggerReason: TriggerReason,
    evDeparted = false,
  ): Promise<void> {
    this.timers.clear(`sample:${evse.id}`);
    this.timers.clear(`evConnectionTimeout:${evse.id}`);
    // One instant for the final reading and the end of energy flow, so the register is exact.
    const now = performance.now();
    const reading = evse.reading(now);
    const tx = evse.endTransaction(now);
    this.scheduleFullCheck(evse);
    if (!tx) return;
    tx.chargingState = evDeparted || !evse.vehicle ? 'Idle' : 'EVConnected';
    this.transactionEnded(evse);
    this.heldSamples = 0;
    const measurands = this.deviceModel.getMeasurands('SampledDataCtrlr', 'TxEndedMeasurands');
    await this.sendTransactionEvent(tx, 'Ended', triggerReason, {
      stoppedReason: reason,
      meterValue: [meterValue(reading, measurands, 'Transaction.End', new Date())],
    });
    this.emit('transactionStopped', {
      connectorId: evse.id,
      transactionId: tx.id,
      meterStop: reading.registerWh,
      reason,
    });
    if (evse.scheduledAvailability) {
      evse.availability = evse.scheduledAvailability;
      evse.scheduledAvailability = undefined;
      if (evse.availability === 'Inoperative') await this.changeStatus(evse, 'Unavailable');
    }
    this.onTransactionEnded();
  }

  protected async endAfterPowerLoss(evse: Evse): Promise<void> {
    await this.endTransaction(evse, 'PowerLoss', 'AbnormalCondition');
  }

  protected async unplugVehicle(evse: Evse): Promise<void> {
    const tx = evse.transaction;
    if (tx) await this.endTransaction(evse, tx.endOnUnplug ?? 'EVDisconnected', 'EVDeparted', true);
    evse.unplug();
    this.timers.clear(`full:${evse.id}`);
    // A fault or a manual Unavailable outlasts the vehicle; everything else returns to idle.
    if (!evse.outOfService) await this.changeStatus(evse, this.restingStatus(evse));
    this.emit('unplugged', { connectorId: evse.id });
  }

  protected onTransactionEventAnswered(
    request: TransactionEventRequest,
    response: TransactionEventResponse,
  ): void {
    const screen = this.settings.personality.has('cost-screen');
    const txId = request.transactionInfo.transactionId;
    showAnswer(screen, response, txId, (event) => this.emit('screen', event));
    const status = response.idTokenInfo?.status;
    if (!request.idToken || status === undefined || status === 'Accepted') return;
    const transactionId = request.transactionInfo.transactionId;
    const evse = this.evses.find((candidate) => candidate.transaction?.id === transactionId);
    this.warn(`idToken ${request.idToken.idToken} answered ${status} for ${transactionId}`);
    if (!evse) return;
    this.defer(async () => {
      if (evse.transaction?.id === transactionId) {
        await this.deauthorize(evse, 'DeAuthorized', 'Deauthorized');
      }
    });
  }

  private announceStarted(evse: Evse, tx: Transaction): void {
    if (tx.announced || !tx.authorization || evse.transaction !== tx) return;
    tx.announced = true;
    this.emit('transactionStarted', {
      connectorId: evse.id,
      transactionId: tx.id,
      idTag: tx.authorization.idToken.idToken,
      meterStart: tx.meterStart,
    });
  }
}
