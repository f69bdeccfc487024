import type { ChargerEvents, TransferStatus } from '../port.js';
import type { OcppEventLog } from '../connection/event-log.js';
import type { ChargerDeviations } from '../connection/deviations.js';
import type { ChargerMetering } from '../metering/metering.js';
import type { ChargerClocks } from './charger-clocks.js';
import type { ChargerInfo } from './charger-info.js';
import { WHOLE_CHARGER, type ConnectorStateStore } from './connector-state.js';
import type { ChargerReports } from './reports.js';

/** Where the central system keeps what adapters report about their chargers. */
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
}

/** The reports of one charger's adapter, each kept where it belongs. */
export function keptReports(chargerId: string, keep: ReportKeepers): ChargerReports {
  return {
    booted: (info) => {
      keep.info.booted(chargerId, info);
      keep.clocks.booted(chargerId);
      keep.events().chargerBooted(chargerId);
      keep.afterBoot(chargerId);
    },
    status: (connectorId, status, errorCode, transactionless) => {
      keep.connectorState.setStatus(chargerId, connectorId, status, errorCode);
      if (connectorId !== WHOLE_CHARGER)
        keep.events().connectorStatus(chargerId, connectorId, status, transactionless);
    },
    statusOf: (connectorId) => keep.connectorState.get(chargerId, connectorId).status,
    vehicle: (connectorId, info, at) =>
      keep.connectorState.setVehicle(chargerId, connectorId, info, at),
    noted: (action, note, payload) => keep.eventLog.record(chargerId, action, note, payload),
    deviation: (kind, example) => {
      keep.deviations.record(chargerId, kind, example);
      keep.onDeviation?.(chargerId, kind);
    },
    transfer: (status) => keep.onTransferStatus?.(chargerId, status),
    metering: (measurands) => {
      if (keep.metering.record(chargerId, measurands)) {
        keep.eventLog.record(chargerId, 'configure', `meters: ${measurands.join(',') || 'none'}`);
      }
    },
  };
}
