import type { SessionStore } from '../charging/session-store.js';
import type { SiteDirectory } from '../config/site.js';
import type { CentralSystem } from '../ocpp/central-system.js';
import { transferDirectory } from '../transfers/directory.js';
import { FileArea } from '../transfers/file-area.js';
import { TransferStore } from '../transfers/transfer-store.js';
import { Transfers } from '../transfers/transfers.js';
import { TransferUpkeep } from '../transfers/upkeep.js';
import type { LateBound } from './late-bound.js';
import type { Basics } from './store.js';

/** The address chargers fetch firmware from and upload logs to. */
export interface TransferBaseUrl {
  url: string;
}

export interface TransfersDeps extends Basics {
  site: SiteDirectory;
  sessions: SessionStore;
  central: CentralSystem;
  /** Where the central system hands the chargers' transfer reports. */
  bound: LateBound<Transfers>;
}

/**
 * Firmware and log transfers. Chargers are given the operator listener's address once it listens
 * (`baseUrl` is set then), unless one is configured. The upkeep (timeouts, file retention) is
 * started by the gateway once it listens.
 */
export function buildTransfers(d: TransfersDeps): {
  transfers: Transfers;
  baseUrl: TransferBaseUrl;
  upkeep: TransferUpkeep;
} {
  const { config } = d;
  const baseUrl: TransferBaseUrl = { url: config.transfers.baseUrl ?? '' };
  const transfers = new Transfers({
    store: new TransferStore(d.db),
    area: new FileArea(transferDirectory(config)),
    clock: d.clock,
    log: d.log.child({ component: 'transfers' }),
    site: d.site,
    chargers: {
      isOnline: (chargerId) => d.central.calls.isOnline(chargerId),
      connector: (chargerId, connectorId) => d.central.calls.connector(chargerId, connectorId),
      updateFirmware: (chargerId, request) =>
        d.central.operatorCalls.updateFirmware(chargerId, request),
      requestLog: (chargerId, request) => d.central.operatorCalls.requestLog(chargerId, request),
    },
    openSessions: (chargerId) => d.sessions.openOnCharger(chargerId).map((s) => s.id),
    baseUrl: () => baseUrl.url,
    settings: config.transfers,
  });
  d.bound.set(transfers);
  const upkeep = new TransferUpkeep(transfers, {
    log: d.log.child({ component: 'transfers' }),
    logFilesDays: config.retention.logFilesDays,
    firmwareFilesDays: config.retention.firmwareFilesDays,
    retentionIntervalMs: config.retention.intervalMinutes * 60_000,
  });
  return { transfers, baseUrl, upkeep };
}
