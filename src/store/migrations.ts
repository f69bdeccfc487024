import type Database from 'better-sqlite3';

/** database.ts's Db, named here without importing the module that runs the migrations. */
type Db = Database.Database;
import { migrationV1 } from './migrations/001-v1.js';
import { migrationOcpp201 } from './migrations/002-ocpp201.js';
import { migrationUplink } from './migrations/003-uplink.js';
import { migrationIdempotencyKeys } from './migrations/004-idempotency-keys.js';
import { migrationMeter } from './migrations/005-meter.js';
import { migrationOperator } from './migrations/006-operator.js';
import { migrationFieldEdge } from './migrations/007-field-edge.js';
import { migrationOperations } from './migrations/008-operations.js';
import { migrationFieldSession } from './migrations/009-field-session.js';
import { migrationOperatorChargers } from './migrations/010-operator-chargers.js';
import { migrationOperatorAvailability } from './migrations/011-operator-availability.js';
import { migrationPowerOverrides } from './migrations/012-power-overrides.js';
import { migrationChargerKeys } from './migrations/013-charger-keys.js';
import { migrationConsoleLogins } from './migrations/014-console-logins.js';
import { migrationClockOffsets } from './migrations/015-clock-offsets.js';
import { migrationMeterTruth } from './migrations/016-meter-truth.js';
import { migrationChargerSampling } from './migrations/017-charger-sampling.js';
import { migrationClockEpochs } from './migrations/018-clock-epochs.js';
import { migrationChargerPasswordPushes } from './migrations/019-charger-password-pushes.js';
import { migrationTariffs } from './migrations/020-tariffs.js';
import { migrationTransfers } from './migrations/021-transfers.js';
import { migrationAlerts } from './migrations/022-alerts.js';
import { migrationStopOrigin } from './migrations/023-stop-origin.js';
import { migrationOcpp201EvseIndex } from './migrations/024-ocpp201-evse-index.js';
import { migrationAlertRetention } from './migrations/025-alert-retention.js';
import { migrationMeterClasses } from './migrations/026-meter-classes.js';
import { migrationTransferUpkeep } from './migrations/027-transfer-upkeep.js';
import { migrationIdTokens } from './migrations/028-id-tokens.js';
import { migrationTaps } from './migrations/029-taps.js';
import { migrationLocalLists } from './migrations/030-local-lists.js';
import { migrationOcpp201EventKeys } from './migrations/031-ocpp201-event-keys.js';
import { migrationOcpp201CompactEvents } from './migrations/032-ocpp201-compact-events.js';
import { migrationStationLimits } from './migrations/033-station-limits.js';
import { migrationOcpp201EventsInArrivalOrder } from './migrations/034-ocpp201-events-in-arrival-order.js';

/**
 * Applied in the order of their file numbers (user_version counts them), append-only: a released
 * migration is never edited, only followed by the next number.
 */
export const migrations: readonly string[] = [
  migrationV1,
  migrationOcpp201,
  migrationUplink,
  migrationIdempotencyKeys,
  migrationMeter,
  migrationOperator,
  migrationFieldEdge,
  migrationOperations,
  migrationFieldSession,
  migrationOperatorChargers,
  migrationOperatorAvailability,
  migrationPowerOverrides,
  migrationChargerKeys,
  migrationConsoleLogins,
  migrationClockOffsets,
  migrationMeterTruth,
  migrationChargerSampling,
  migrationClockEpochs,
  migrationChargerPasswordPushes,
  migrationTariffs,
  migrationTransfers,
  migrationAlerts,
  migrationStopOrigin,
  migrationOcpp201EvseIndex,
  migrationAlertRetention,
  migrationMeterClasses,
  migrationTransferUpkeep,
  migrationIdTokens,
  migrationTaps,
  migrationLocalLists,
  migrationOcpp201EventKeys,
  migrationOcpp201CompactEvents,
  migrationStationLimits,
  migrationOcpp201EventsInArrivalOrder,
];

/**
 * Brings the schema up to date, one migration per transaction. Each step re-reads the version
 * inside an IMMEDIATE transaction (it takes the write lock before reading), so two processes
 * opening the same new database, a gateway starting and a CLI command say, never both apply a
 * step: the second waits on busy_timeout and finds it done.
 */
export function migrate(db: Db): void {
  for (;;) {
    const applied = db
      .transaction(() => {
        const current = db.pragma('user_version', { simple: true }) as number;
        if (current > migrations.length) {
          throw new Error(
            `database schema version ${current} is newer than this gateway knows (${migrations.length}); upgrade the gateway`,
          );
        }
        if (current === migrations.length) return false;
        db.exec(migrations[current] as string);
        db.pragma(`user_version = ${current + 1}`);
        return true;
      })
      .immediate();
    if (!applied) return;
  }
}
