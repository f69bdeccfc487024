import type { LocalAuthList } from '../shared/local-list.js';
import type { SimMeasurand } from '../shared/meter-reading.js';
import type * as Shared from '../shared/simulated-charge-point.js';
import { CardReader16 } from './card-reader.js';
import { validateVehicle } from './connector.js';
import type { VehicleSpec } from './connector.js';
import type { Ocpp16Protocol } from './events.js';
import type { ChargePointErrorCode, ChargePointStatus, StopReason } from './ocpp-types.js';

export type { ChargePointOptions, RemoteStartPolicy } from '../shared/charge-point-options.js';
export type { VehicleSpec } from './connector.js';
export type * from './events.js';
export type { ChargePointErrorCode, ChargePointStatus, StopReason } from './ocpp-types.js';

export type ConnectorState = Shared.ConnectorState<Ocpp16Protocol>;

const PLUG_IN_MEASURANDS: readonly SimMeasurand[] = ['Energy.Active.Import.Register', 'SoC'];

/**
 * A simulated OCPP 1.6J charge point with N connectors, each with its own energy meter, that
 * charges simulated vehicles in accelerated time. This layer is what tests and the CLI drive:
 * the physical actions of a driver and the observable state.
 */
export class ChargePoint16
  extends CardReader16
  implements Shared.SimulatedChargePoint<Ocpp16Protocol>
{
  async plugIn(connectorId: number, vehicle: VehicleSpec): Promise<void> {
    const connector = this.connector(connectorId);
    if (connector.vehicle) throw new Error(`connector ${connectorId} already has a vehicle`);
    validateVehicle(vehicle);
    connector.plug(vehicle);
    this.emit('plugged', { connectorId, vehicle: { ...vehicle } });
    if (connector.status === 'Available') await this.changeStatus(connector, 'Preparing');
    // DC chargers learn the SoC over ISO 15118 / CHAdeMO before any transaction exists.
    await this.sendMeterValues(connector, PLUG_IN_MEASURANDS, 'Sample.Periodic');
    const pending = connector.pendingRemoteStart;
    if (pending && !connector.transaction) {
      connector.pendingRemoteStart = undefined;
      this.timers.clear(`connectionTimeout:${connectorId}`);
      await this.startTransaction(connector, pending.idTag, !pending.byTap);
    } else if (this.settings.personality.has('local-start') && !connector.transaction) {
      // The driver badges a card in the charger's local list: no Authorize, the central system
      // hears of it in StartTransaction.
      await this.startTransaction(connector, this.settings.personality.localIdTag, false);
    } else if (vehicle.macAddress !== undefined && !connector.transaction) {
      await this.identifyVehicle(connector, vehicle.macAddress);
    }
  }

  /**
   * A driver badges a card while the link is down: the charger starts from its local list when
   * LocalAuthorizeOffline allows and the list accepts the idTag; the StartTransaction is queued
   * and reported on reconnect. Returns the list's verdict ('Accepted' when it started).
   */
  get localList(): LocalAuthList {
    return this.localAuthorization.list;
  }

  async startOffline(connectorId: number, idTag: string): Promise<string> {
    if (this.link.isOpen)
      throw new Error(`${this.identity} is online: its card goes to the central system`);
    const connector = this.connector(connectorId);
    const verdict = this.localAuthorization.offlineVerdict(idTag, Date.now()) ?? 'Unknown';
    if (verdict !== 'Accepted') return verdict;
    // The transaction begins at once under a provisional id; the status it reports then waits
    // for the link, which the driver does not.
    this.startTransaction(connector, idTag, false).catch((error: unknown) =>
      this.warn('offline start failed', error),
    );
    return verdict;
  }

  async unplug(connectorId: number): Promise<void> {
    const connector = this.connector(connectorId);
    if (!connector.vehicle) throw new Error(`no vehicle is plugged into connector ${connectorId}`);
    await this.unplugVehicle(connector);
  }

  /** Ends the running transaction early (stop button, fault); the vehicle stays plugged. */
  async interrupt(connectorId: number, reason: StopReason = 'Local'): Promise<void> {
    const connector = this.connector(connectorId);
    if (!connector.transaction) throw new Error(`no transaction runs on connector ${connectorId}`);
    await this.stopTransaction(connector, reason);
  }

  /** Sends a StatusNotification even if unchanged; connector 0 is the charge point itself. */
  async setStatus(
    connectorId: number,
    status: ChargePointStatus,
    errorCode: ChargePointErrorCode = 'NoError',
  ): Promise<void> {
    if (connectorId === 0) {
      this.mainStatus = status;
      this.mainErrorCode = errorCode;
      await this.notifyStatus(0, status, errorCode);
      return;
    }
    await this.changeStatus(this.connector(connectorId), status, errorCode, true);
  }

  state(connectorId: number): ConnectorState {
    const connector = this.connector(connectorId);
    const reading = connector.reading();
    const transaction = connector.transaction;
    return {
      status: connector.status,
      errorCode: connector.errorCode,
      transactionId: transaction?.id,
      registerWh: reading.registerWh,
      socPercent: connector.socPercent,
      idTag: transaction?.idTag ?? connector.pendingRemoteStart?.idTag,
      deliveredWh: transaction ? reading.registerWh - transaction.meterStart : 0,
      powerW: Math.round(reading.powerW),
      plugged: connector.vehicle !== undefined,
    };
  }
}
