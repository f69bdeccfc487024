import type { Db } from './database.js';
import { schemaV1 } from './schema-v1.js';
import { schemaV2 } from './schema-v2.js';
import { schemaV3Uplink } from './schema-v3-uplink.js';
import { schemaV4Money } from './schema-v4-money.js';
import { schemaV5Meter } from './schema-v5-meter.js';
import { schemaOperator } from './schema-operator.js';
import { schemaFieldEdge } from './schema-field-edge.js';
import { schemaOperations } from './schema-operations.js';
import { schemaChargerOps } from './schema-charger-ops.js';

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
  schemaChargerOps,
];

export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > migrations.length) {
    throw new Error(
      `database schema version ${current} is newer than this gateway knows (${migrations.length}); upgrade the gateway`,
    );
  }
  for (let version = current; version < migrations.length; version++) {
    const sql = migrations[version] as string;
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
