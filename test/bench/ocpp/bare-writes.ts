import { openBareDatabase } from '../lib/bare-database.js';
import { BareGroupCommit } from '../lib/bare-group-commit.js';
import { bareSessions } from '../lib/bare-sessions.js';
import { seedReferenceDriver } from '../lib/seed.js';

/**
 * The writes of the bare server that writes each meter sample (bare-server.ts given a database):
 * the session row a transaction start opens, committed durably as the gateway commits a start
 * (strict), and each sample's register written to it with SessionStore's statement, committed at
 * the sample's tier (relaxed: synchronous=NORMAL, no fsync) through the group commit, as the
 * gateway does (src/store/group-commit.ts). The sample is answered after its commit: stored before
 * acknowledged. Which row a transaction is, is kept in memory.
 */
export interface SampleWrites {
  started(chargerId: string, connectorId: string, ref: string, registerWh: number): Promise<void>;
  sample(chargerId: string, ref: string, registerWh: number): Promise<void>;
}

export function sampleWrites(dbPath: string): SampleWrites {
  const db = openBareDatabase(dbPath);
  seedReferenceDriver(db, new Date().toISOString());
  const rows = bareSessions(db);
  const commits = new BareGroupCommit(db);
  const open = new Map<string, string>();
  const key = (chargerId: string, ref: string) => `${chargerId}\u0000${ref}`;
  return {
    started: (chargerId, connectorId, ref, registerWh) =>
      commits.write('strict', () => {
        open.set(key(chargerId, ref), rows.open(chargerId, connectorId, ref, registerWh));
      }),
    sample: (chargerId, ref, registerWh) =>
      commits.write('relaxed', () => {
        const id = open.get(key(chargerId, ref));
        if (id === undefined)
          throw new Error(`${chargerId}: a sample of unknown transaction ${ref}`);
        rows.sample(id, registerWh);
      }),
  };
}

/** The energy register of a meter value list (both protocols' shape), Wh: the first reading's. */
export function registerOf(meterValue: unknown): number {
  const values = (meterValue as { sampledValue?: { measurand?: string; value?: unknown }[] }[])
    .flatMap((m) => m.sampledValue ?? [])
    .filter(
      (v) => (v.measurand ?? 'Energy.Active.Import.Register') === 'Energy.Active.Import.Register',
    );
  const wh = Number(values[0]?.value);
  if (!Number.isFinite(wh)) throw new Error(`no energy register in ${JSON.stringify(meterValue)}`);
  return wh;
}
