import type { Db } from './database.js';
import { schemaV1 } from './schema-v1.js';
import { schemaV2 } from './schema-v2.js';
import { schemaV3Uplink } from './schema-v3-uplink.js';
import { schemaV4Money } from './schema-v4-money.js';
import { schemaV5Meter } from './schema-v5-meter.js';
import { schemaOperator } from './schema-operator.js';
import { schemaFieldEdge } from './schema-field-edge.js';
import { schemaOperations } from './schema-operations.js';
import { schemaFieldSession } from './schema-field-session.js';
import { schemaOperatorChargers } from './schema-operator-chargers.js';
import { schemaChargerOps } from './schema-charger-ops.js';
import { schemaLoadInputs } from './schema-load-inputs.js';
import { schemaChargerKeys } from './schema-charger-keys.js';
import { schemaChargerPasswordPushes } from './schema-charger-password-pushes.js';
import { schemaConsole } from './schema-console.js';
import { schemaClockOffsets } from './schema-clock-offsets.js';
import { schemaMeterTruth } from './schema-meter-truth.js';
import { schemaChargerSampling } from './schema-charger-sampling.js';
import { schemaClockEpochs } from './schema-clock-epochs.js';
import { schemaTariffs } from './schema-tariffs.js';
import { schemaTransfers } from './schema-transfers.js';
import { schemaAlerts } from './schema-alerts.js';
import { schemaStopOrigin } from './schema-stop-origin.js';

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
