import type { Db } from './database.js';
import { schemaV1 } from './migrations/001-v1.js';
import { schemaV2 } from './migrations/002-ocpp201.js';
import { schemaV3Uplink } from './migrations/003-uplink.js';
import { schemaV4Money } from './migrations/004-idempotency-keys.js';
import { schemaV5Meter } from './migrations/005-meter.js';
import { schemaOperator } from './migrations/006-operator.js';
import { schemaFieldEdge } from './migrations/007-field-edge.js';
import { schemaOperations } from './migrations/008-operations.js';
import { schemaFieldSession } from './migrations/009-field-session.js';
import { schemaOperatorChargers } from './migrations/010-operator-chargers.js';
import { schemaChargerOps } from './migrations/011-operator-availability.js';
import { schemaLoadInputs } from './migrations/012-power-overrides.js';
import { schemaChargerKeys } from './migrations/013-charger-keys.js';
import { schemaChargerPasswordPushes } from './migrations/019-charger-password-pushes.js';
import { schemaConsole } from './migrations/014-console-logins.js';
import { schemaClockOffsets } from './migrations/015-clock-offsets.js';
import { schemaMeterTruth } from './migrations/016-meter-truth.js';
import { schemaChargerSampling } from './migrations/017-charger-sampling.js';
import { schemaClockEpochs } from './migrations/018-clock-epochs.js';
import { schemaTariffs } from './migrations/020-tariffs.js';
import { schemaTransfers } from './migrations/021-transfers.js';
import { schemaAlerts } from './migrations/022-alerts.js';
import { schemaStopOrigin } from './migrations/023-stop-origin.js';

/** Ordered, append-only list: a released migration is never edited, only followed by a new one. */
const migrations: readonly string[] = [
  schemaV1,
  schemaV2,
  schemaV3Uplink,
  schemaV4Money,
  schemaV5Meter,
  schemaOperator,
  schemaFieldEdge,
  schemaOperations,
  schemaFieldSession,
  schemaOperatorChargers,
  schemaChargerOps,
  schemaLoadInputs,
  schemaChargerKeys,
  schemaConsole,
  schemaClockOffsets,
  schemaMeterTruth,
  schemaChargerSampling,
  schemaClockEpochs,
  schemaChargerPasswordPushes,
  schemaTariffs,
  schemaTransfers,
  schemaAlerts,
  schemaStopOrigin,
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
