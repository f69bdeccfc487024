import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { SessionStore } from '../charging/session-store.js';
import type { GatewayConfig } from '../config/schema.js';
import type { SiteDirectory } from '../config/site.js';
import type { CentralSystem } from '../ocpp/central-system.js';
import { FileArea } from '../transfers/file-area.js';
import { TransferStore } from '../transfers/transfer-store.js';
import { Transfers } from '../transfers/transfers.js';
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
 * (`baseUrl` is set then), unless one is configured.
 */
export function buildTransfers(d: TransfersDeps): {
  transfers: Transfers;
  baseUrl: TransferBaseUrl;
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
  return { transfers, baseUrl };
}

/** Where firmware and logs are kept: configured, else `files` beside the database. */
function transferDirectory(config: GatewayConfig): string {
  if (config.transfers.directory !== undefined) return config.transfers.directory;
  if (config.database.path === ':memory:')
    return join(tmpdir(), `fleet-gateway-files-${process.pid}`);
  return join(dirname(config.database.path), 'files');
}
