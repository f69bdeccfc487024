import type { LocalAuthList } from '../shared/local-list.js';
import type { IdTokenKind } from './ocpp-types.js';
import type { FaultCode } from '../shared/events.js';
import { packVoltage, reportedSoc } from '../shared/meter-reading.js';
import type { SimMeasurand } from '../shared/meter-reading.js';
import { validateVehicle } from '../shared/metered-outlet.js';
import type { VehicleSpec } from '../shared/metered-outlet.js';
import type * as Shared from '../shared/simulated-charge-point.js';
import { CardReader201 } from './card-reader.js';
import type { Ocpp201Protocol, StationStopReason } from './events.js';
import type { Evse } from './evse.js';
import type { ConnectorStatus, TriggerReason } from './ocpp-types.js';

export type { ChargePoint201Options } from './station-core.js';
export type { ChargePointOptions, RemoteStartPolicy } from '../shared/charge-point-options.js';
export type { VehicleSpec } from '../shared/metered-outlet.js';
export type * from './events.js';
export type { ConnectorStatus } from './ocpp-types.js';

export type ConnectorState = Shared.ConnectorState<Ocpp201Protocol>;

const PLUG_IN_MEASURANDS: readonly SimMeasurand[] = ['Energy.Active.Import.Register', 'SoC'];

/** The TransactionEvent trigger that goes with each reason a test can interrupt with. */
const INTERRUPT_TRIGGERS: Record<StationStopReason, TriggerReason> = {
  Local: 'StopAuthorized',
  Remote: 'RemoteStop',
  DeAuthorized: 'Deauthorized',
  // interrupt() keeps the vehicle plugged: the EV stopped talking rather than leaving.
  EVDisconnected: 'EVCommunicationLost',
  PowerLoss: 'AbnormalCondition',
  Reboot: 'AbnormalCondition',
  Other: 'AbnormalCondition',
  EmergencyStop: 'AbnormalCondition',
  ImmediateReset: 'ResetCommand',
  Timeout: 'EVConnectTimeout',
  EnergyLimitReached: 'EnergyLimitReached',
};

// Stopping these withdraws the authorization, which TxStopPoint may keep open until unplug.
const DEAUTHORIZING: ReadonlySet<StationStopReason> = new Set(['Local', 'Remote', 'DeAuthorized']);

/**
 * A simulated OCPP 2.0.1 DC charging station with N EVSEs (one connector each) that charges
 * simulated vehicles in accelerated time and reports them as an ISO 15118 charger does. The API
 * is the 1.6 simulator's: `connectorId` is the EVSE id.
 */
export class ChargePoint201
  extends CardReader201
  implements Shared.SimulatedChargePoint<Ocpp201Protocol>
{
  async plugIn(connectorId: number, vehicle: VehicleSpec): Promise<void> {
    const evse = this.evse(connectorId);
    if (evse.vehicle) throw new Error(`EVSE ${connectorId} already has a vehicle`);
    validateVehicle(vehicle);
    evse.plug(vehicle);
    this.emit('plugged', { connectorId, vehicle: { ...vehicle } });
    if (evse.connectorStatus === 'Available') await this.changeStatus(evse, 'Occupied');
    // ISO 15118: the EV states its limits and needs before any transaction exists.
    await this.notifyChargingNeeds(evse, vehicle);
    await this.sendMeterValues(evse, PLUG_IN_MEASURANDS, 'Sample.Periodic');
    this.timers.clear(`evConnectionTimeout:${connectorId}`);
    if (evse.transaction) {
      // Started at Authorized without a vehicle; now energy can flow.
      await this.updateChargingState(evse, 'CablePluggedIn');
      return;
    }
    const pending = evse.pendingAuthorization;
    if (pending) {
      evse.pendingAuthorization = undefined;
      await this.startTransaction(evse, 'CablePluggedIn', pending);
    } else if (this.settings.personality.has('local-start')) {
      await this.startWithLocalBadge(evse);
    } else {
      if (this.txStartPoint === 'EVConnected') await this.startTransaction(evse, 'CablePluggedIn');
      // AutoCharge: the EV's MAC read over ISO 15118 / DIN is its token.
      if (vehicle.macAddress !== undefined) await this.identifyVehicle(evse, vehicle.macAddress);
    }
  }

  /**
   * The driver badges a card in the station's local list: no Authorize, the CSMS hears of it in
   * the Started event (and may answer that it does not accept it).
   */
  private async startWithLocalBadge(evse: Evse): Promise<void> {
    const idToken = { idToken: this.settings.personality.localIdTag, type: 'ISO14443' as const };
    await this.startTransaction(evse, 'Authorized', { idToken });
  }

  get localList(): LocalAuthList {
    return this.localAuthorization.list;
  }

  /**
   * A driver badges a card while the link is down: the station starts from its local list when
   * LocalAuthorizeOffline allows and the list accepts the token; the Started event is queued
   * (offline) and reported on reconnect. Returns the list's verdict ('Accepted' when it started).
   */
  async startOffline(connectorId: number, token: string): Promise<string> {
    if (this.link.isOpen) throw new Error(`${this.identity} is online: its card goes to the CSMS`);
    const evse = this.evse(connectorId);
    const verdict = this.localAuthorization.offlineVerdict(token, Date.now()) ?? 'Unknown';
    if (verdict !== 'Accepted') return verdict;
    const type = (this.localList.entry(token)?.type ?? 'ISO14443') as IdTokenKind;
    await this.startTransaction(evse, 'Authorized', { idToken: { idToken: token, type } });
    return verdict;
  }

  async unplug(connectorId: number): Promise<void> {
    const evse = this.evse(connectorId);
    if (!evse.vehicle) throw new Error(`no vehicle is plugged into EVSE ${connectorId}`);
    await this.unplugVehicle(evse);
  }

  /**
   * Ends the running transaction early (stop button, fault); the vehicle stays plugged. Local,
   * Remote and DeAuthorized only withdraw the authorization: with TxStopPoint EVConnected the
   * transaction then lasts until unplug.
   */
  async interrupt(connectorId: number, reason: StationStopReason = 'Local'): Promise<void> {
    const evse = this.evse(connectorId);
    if (!evse.transaction) throw new Error(`no transaction runs on EVSE ${connectorId}`);
    const trigger = INTERRUPT_TRIGGERS[reason];
    if (DEAUTHORIZING.has(reason)) await this.deauthorize(evse, reason, trigger);
    else await this.endTransaction(evse, reason, trigger);
  }

  /**
   * Sends a StatusNotification even if unchanged; EVSE 0 is every EVSE. An errorCode other than
   * NoError goes out as a NotifyEvent (Connector Problem = true, techInfo = the code), and its
   * end as Problem = false.
   */
  async setStatus(
    connectorId: number,
    status: ConnectorStatus,
    errorCode: FaultCode = 'NoError',
  ): Promise<void> {
    const evses = connectorId === 0 ? this.evses : [this.evse(connectorId)];
    for (const evse of evses) {
      const previousError = evse.errorCode;
      await this.changeStatus(evse, status, errorCode, true);
      if (errorCode !== 'NoError') await this.notifyProblem(evse, errorCode, false);
      else if (previousError !== 'NoError') await this.notifyProblem(evse, previousError, true);
      // A fault suspends the energy flow of a running transaction; clearing it resumes it.
      await this.updateChargingState(evse);
    }
  }

  state(connectorId: number): ConnectorState {
    const evse = this.evse(connectorId);
    const reading = evse.reading();
    const tx = evse.transaction;
    return {
      status: evse.connectorStatus,
      errorCode: evse.errorCode,
      transactionId: tx?.id,
      registerWh: reading.registerWh,
      socPercent: evse.socPercent,
      idTag: (tx?.authorization ?? evse.pendingAuthorization)?.idToken.idToken,
      deliveredWh: tx ? reading.registerWh - tx.meterStart : 0,
      powerW: Math.round(reading.powerW),
      plugged: evse.vehicle !== undefined,
    };
  }

  /**
   * Test hook: sends the TransactionEvents already delivered for a transaction again, unchanged
   * (same seqNo), as a station replaying its log after a crash does. Takes an EVSE id (its
   * running or most recent transaction) or a transactionId; resolves with the number sent.
   */
  async replayTransactionEvents(target: number | string): Promise<number> {
    const transactionId =
      typeof target === 'string'
        ? target
        : (this.evse(target).transaction?.id ?? this.evse(target).lastTransactionId);
    if (transactionId === undefined) throw new Error(`no transaction on EVSE ${String(target)}`);
    return this.transactionEvents.replay(transactionId);
  }

  /** TransactionEvents waiting for delivery (offline, or unanswered). */
  get queuedTransactionEvents(): number {
    return this.transactionEvents.size;
  }

  private async notifyChargingNeeds(evse: Evse, vehicle: VehicleSpec): Promise<void> {
    const soc = evse.socPercent ?? vehicle.socPercent;
    const capacityWh = vehicle.batteryKwh * 1000;
    const maxVoltage = packVoltage(100);
    await this.send('NotifyEVChargingNeeds', {
      evseId: evse.id,
      chargingNeeds: {
        requestedEnergyTransfer: 'DC',
        dcChargingParameters: {
          // The EV asks for its full power at the lowest pack voltage it will see.
          evMaxCurrent: Math.ceil(vehicle.maxPowerW / packVoltage(soc)),
          evMaxVoltage: Math.ceil(maxVoltage),
          evMaxPower: Math.round(vehicle.maxPowerW),
          evEnergyCapacity: Math.round(capacityWh),
          stateOfCharge: reportedSoc(soc),
          // Energy into the battery to reach 100 %, rounded up to whole Wh.
          energyAmount: Math.ceil((capacityWh * (100 - soc)) / 100),
        },
      },
    });
  }
}
