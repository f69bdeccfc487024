import type { ChargerEvents, ConnectorStatus, TransferStatus } from '../port.js';
import type { OcppEventLog } from '../connection/event-log.js';
import type { ChargerDeviations } from '../connection/deviations.js';
import type { ChargerMetering } from '../metering/metering.js';
import type { ChargerClocks } from './charger-clocks.js';
import type { ChargerInfo } from './charger-info.js';
import { WHOLE_CHARGER, type ConnectorStateStore } from './connector-state.js';
import type { BootInfo, ChargerReports, StationPayment, VehicleInfo } from './reports.js';

/** Where the central system keeps what adapters report about their chargers (one for all). */
export interface ReportKeepers {
  info: ChargerInfo;
  clocks: ChargerClocks;
  connectorState: ConnectorStateStore;
  eventLog: OcppEventLog;
  deviations: ChargerDeviations;
  metering: ChargerMetering;
  events: () => ChargerEvents;
  /** The charger booted: its settings are read once the boot reply has gone out. */
  afterBoot: (chargerId: string) => void;
  onDeviation?: (chargerId: string, kind: string) => void;
  onTransferStatus?: (chargerId: string, status: TransferStatus) => void;
  onStationPayment?: (chargerId: string, payment: StationPayment) => void;
}

/**
 * The reports of one charger's adapter, each kept where it belongs. A class, not an object of
 * closures: a connection holds its charger's id and the keepers every connection shares, and the
 * methods are the prototype's (eight closures and their context per connection, before).
 */
export class KeptReports implements ChargerReports {
  constructor(
    private readonly chargerId: string,
    private readonly keep: ReportKeepers,
  ) {}

  booted(info: BootInfo): void {
    const { keep, chargerId } = this;
    keep.info.booted(chargerId, info);
    keep.clocks.booted(chargerId);
    keep.events().chargerBooted(chargerId);
    keep.afterBoot(chargerId);
  }

  status(
    connectorId: string,
    status: ConnectorStatus,
    errorCode: string | null,
    transactionless?: boolean,
  ): void {
    const { keep, chargerId } = this;
    keep.connectorState.setStatus(chargerId, connectorId, status, errorCode);
    if (connectorId !== WHOLE_CHARGER)
      keep.events().connectorStatus(chargerId, connectorId, status, transactionless);
  }

  statusOf(connectorId: string): ConnectorStatus {
    return this.keep.connectorState.get(this.chargerId, connectorId).status;
  }

  vehicle(connectorId: string, info: VehicleInfo, at: string): void {
    this.keep.connectorState.setVehicle(this.chargerId, connectorId, info, at);
  }

  noted(action: string, note: string, payload?: unknown): void {
    this.keep.eventLog.record(this.chargerId, action, note, payload);
  }

  deviation(kind: string, example: unknown): void {
    this.keep.deviations.record(this.chargerId, kind, example);
    this.keep.onDeviation?.(this.chargerId, kind);
  }

  transfer(status: TransferStatus): void {
    this.keep.onTransferStatus?.(this.chargerId, status);
  }

  stationPayment(payment: StationPayment): void {
    this.keep.onStationPayment?.(this.chargerId, payment);
  }

  metering(measurands: string[]): void {
    const { keep, chargerId } = this;
    if (keep.metering.record(chargerId, measurands)) {
      keep.eventLog.record(chargerId, 'configure', `meters: ${measurands.join(',') || 'none'}`);
    }
  }
}
