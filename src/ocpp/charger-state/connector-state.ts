import type { Statement } from 'better-sqlite3';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../store/database.js';
import type { ConnectorStatus, ConnectorView } from '../port.js';
import type { VehicleInfo } from './reports.js';

interface Row {
  charger_id: string;
  connector_id: string;
  status: string;
  error_code: string | null;
  soc_percent: number | null;
  soc_at: string | null;
  battery_wh: number | null;
}

/** Charger-wide status (OCPP connector 0) is kept under this key. */
export const WHOLE_CHARGER = '*';

const STATUSES = new Set<ConnectorStatus>([
  'available',
  'occupied',
  'charging',
  'suspended',
  'finishing',
  'reserved',
  'unavailable',
  'faulted',
  'unknown',
]);

function asStatus(value: string): ConnectorStatus {
  return STATUSES.has(value as ConnectorStatus) ? (value as ConnectorStatus) : 'unknown';
}

/** Last known status and SoC of every connector, in memory and persisted across restarts. */
export class ConnectorStateStore {
  private readonly views = new Map<string, ConnectorView>();
  private readonly upsertStatus: Statement<[string, string, string, string | null, string, string]>;
  private readonly upsertVehicle: Statement<
    [string, string, number | null, string | null, number | null, string]
  >;

  constructor(
    db: Db,
    private readonly clock: Clock,
    /** Optional: told every change (the uplink publishes it as retained status). */
    private readonly onChange?: (view: ConnectorView) => void,
    /**
     * Runs a status write. Readers are answered from memory, so the row may follow later: the
     * central system hands it to the group commit, with the turn's other relaxed writes.
     */
    private readonly persist: (write: () => void) => void = (write) => write(),
  ) {
    for (const row of db.prepare('SELECT * FROM connector_state').all() as Row[]) {
      this.views.set(key(row.charger_id, row.connector_id), {
        chargerId: row.charger_id,
        connectorId: row.connector_id,
        status: asStatus(row.status),
        errorCode: row.error_code,
        socPercent: row.soc_percent,
        socAt: row.soc_at,
        batteryWh: row.battery_wh,
      });
    }
    // One statement, so one commit: a connector reported Available also forgets the vehicle's SoC
    // (it belongs to the vehicle that left), atomically with the status.
    this.upsertStatus = db.prepare(
      `INSERT INTO connector_state (charger_id, connector_id, status, error_code, status_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (charger_id, connector_id) DO UPDATE SET status = excluded.status,
         error_code = excluded.error_code, status_at = excluded.status_at, updated_at = excluded.updated_at,
         soc_percent = iif(excluded.status = 'available', NULL, soc_percent),
         soc_at = iif(excluded.status = 'available', NULL, soc_at),
         battery_wh = iif(excluded.status = 'available', NULL, battery_wh)`,
    );
    this.upsertVehicle = db.prepare(
      `INSERT INTO connector_state (charger_id, connector_id, status, soc_percent, soc_at, battery_wh, updated_at)
       VALUES (?, ?, 'unknown', ?, ?, ?, ?)
       ON CONFLICT (charger_id, connector_id) DO UPDATE SET soc_percent = excluded.soc_percent,
         soc_at = excluded.soc_at, battery_wh = excluded.battery_wh, updated_at = excluded.updated_at`,
    );
  }

  get(chargerId: string, connectorId: string): ConnectorView {
    return (
      this.views.get(key(chargerId, connectorId)) ?? {
        chargerId,
        connectorId,
        status: 'unknown',
        errorCode: null,
        socPercent: null,
        socAt: null,
        batteryWh: null,
      }
    );
  }

  setStatus(
    chargerId: string,
    connectorId: string,
    status: ConnectorStatus,
    errorCode: string | null,
  ): void {
    const at = new Date(this.clock.now()).toISOString();
    const known = this.views.get(key(chargerId, connectorId));
    const view = this.get(chargerId, connectorId);
    const next = { ...view, status, errorCode };
    // A vehicle's SoC belongs to the vehicle: once the connector is free again it is stale.
    if (status === 'available') {
      next.socPercent = null;
      next.socAt = null;
      next.batteryWh = null;
    }
    this.views.set(key(chargerId, connectorId), next);
    // A status told again (chargers repeat theirs with heartbeats, after reconnects) changes no
    // row: no page appended to the WAL for it, and the row's status_at stays when it began.
    const same =
      known !== undefined &&
      known.status === next.status &&
      known.errorCode === next.errorCode &&
      known.socPercent === next.socPercent &&
      known.socAt === next.socAt &&
      known.batteryWh === next.batteryWh;
    if (!same)
      this.persist(() => this.upsertStatus.run(chargerId, connectorId, status, errorCode, at, at));
    this.onChange?.(next);
  }

  /** Keeps what is new in `info`; a report without SoC leaves the last SoC in place. */
  setVehicle(chargerId: string, connectorId: string, info: VehicleInfo, at: string): void {
    const view = this.get(chargerId, connectorId);
    const next: ConnectorView = {
      ...view,
      socPercent: info.socPercent ?? view.socPercent,
      socAt: info.socPercent === undefined ? view.socAt : at,
      batteryWh: info.batteryWh ?? view.batteryWh,
    };
    this.views.set(key(chargerId, connectorId), next);
    this.upsertVehicle.run(
      chargerId,
      connectorId,
      next.socPercent,
      next.socAt,
      next.batteryWh,
      new Date(this.clock.now()).toISOString(),
    );
    this.onChange?.(next);
  }
}

function key(chargerId: string, connectorId: string): string {
  return `${chargerId}\u0000${connectorId}`;
}
