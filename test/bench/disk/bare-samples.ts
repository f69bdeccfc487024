import { setTimeout as sleep } from 'node:timers/promises';
import { serveParent } from '../http/children.js';
import { openBareDatabase } from '../lib/bare-database.js';
import { BareGroupCommit } from '../lib/bare-group-commit.js';
import { bareSessions } from '../lib/bare-sessions.js';
import { seedReferenceDriver } from '../lib/seed.js';
import { writeBytes } from './io.js';
import type { BareRequest, BareResult } from './messages.js';

/**
 * The reference for the bytes a meter sample costs: the session's energy written as the gateway
 * writes it, on bare better-sqlite3, at the same durability tier and the same pace. A file-backed
 * WAL database with the gateway's pragmas and schema (SQL it reaches for: the same page size,
 * the same row), `sessions` charging sessions, and for each sample the register update of
 * SessionStore (its `segmentStmt`) committed at synchronous=NORMAL, as `relaxed` commits it
 * (src/store/durability.ts), through the bare group commit (alone in its turn at this pace): on
 * the same schedule as the site's chargers sample, for the same window. What is left out is all
 * the gateway does besides that write.
 */
async function run(req: BareRequest): Promise<BareResult> {
  const db = openBareDatabase(req.dbPath);
  seedReferenceDriver(db, new Date().toISOString());
  const rows = bareSessions(db);
  const ids = db.transaction(() =>
    Array.from({ length: req.sessions }, (_, i) =>
      rows.open(`REF-${i}`, '1', String(i + 1), 1_000),
    ),
  )();
  const commits = new BareGroupCommit(db);
  const registers = ids.map(() => 1_000);
  let failure: unknown;
  const sample = (i: number) => {
    registers[i] = (registers[i] as number) + req.traffic.whPerSample;
    const wh = registers[i];
    commits
      .write('relaxed', () => rows.sample(ids[i] as string, wh))
      .catch((err: unknown) => {
        failure ??= err;
      });
  };

  let samples = 0;
  const timers: NodeJS.Timeout[] = [];
  const before = writeBytes(process.pid);
  ids.forEach((_, i) => {
    const fire = () => {
      sample(i);
      samples += 1;
    };
    const periodMs = req.traffic.sampleSeconds * 1000;
    timers.push(
      setTimeout(
        () => {
          fire();
          timers.push(setInterval(fire, periodMs));
        },
        (i / ids.length) * periodMs,
      ),
    );
  });
  await sleep(req.seconds * 1000);
  for (const timer of timers) clearTimeout(timer);
  // The last sample's commit runs in the next turn.
  await new Promise((r) => setImmediate(r));
  const writeBytesDelta = writeBytes(process.pid) - before;
  db.close();
  if (failure) throw failure;
  return { samples, writeBytes: writeBytesDelta };
}

serveParent<BareRequest, BareResult>(run);
