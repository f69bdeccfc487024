import Database from 'better-sqlite3';
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { databaseAdvice, DatabaseError } from '../../store/database.js';

export interface BackupReport {
  path: string;
  bytes: number;
  schemaVersion: number;
  ledgerEntries: number;
  openSessions: number;
}

/**
 * An online, consistent copy of the database: `VACUUM INTO` reads one snapshot (a read
 * transaction: in WAL mode the running gateway keeps writing meanwhile and nothing waits), so the
 * copy holds every transaction committed before it began and none after: the ledger and the
 * wallets agree in it. The source is opened read-only and not migrated, so a backup taken before
 * an upgrade is the old schema as it was. The copy is written beside the target, checked
 * (integrity_check), synced, then renamed into place: a backup file that exists is complete.
 */
export function backupDatabase(sourcePath: string, targetPath: string): BackupReport {
  const target = resolve(targetPath);
  if (existsSync(target)) {
    throw new Error(`backup file ${target} already exists: choose a new name or remove it first`);
  }
  if (!existsSync(sourcePath)) {
    throw new DatabaseError(
      `no database at ${sourcePath} (database.path): check the path in the config`,
    );
  }
  const partial = `${target}.partial`;
  rmSync(partial, { force: true });
  let source: Database.Database | undefined;
  try {
    source = new Database(sourcePath, { readonly: true, fileMustExist: true });
    source.pragma('busy_timeout = 5000');
    source.prepare('VACUUM INTO ?').run(partial);
  } catch (err) {
    rmSync(partial, { force: true });
    throw new DatabaseError(`backup of ${sourcePath} to ${target}: ${databaseAdvice(err)}`);
  } finally {
    source?.close();
  }
  let report: Omit<BackupReport, 'path' | 'bytes'>;
  const copy = new Database(partial, { fileMustExist: true });
  try {
    const check = copy.pragma('integrity_check', { simple: true });
    if (check !== 'ok')
      throw new Error(`the copy ${partial} fails integrity_check: ${String(check)}`);
    report = {
      schemaVersion: copy.pragma('user_version', { simple: true }) as number,
      ledgerEntries: (
        copy.prepare('SELECT count(*) AS n FROM ledger_entries').get() as { n: number }
      ).n,
      openSessions: (
        copy
          .prepare(
            "SELECT count(*) AS n FROM sessions WHERE state IN ('authorizing', 'authorized', 'charging', 'stopping')",
          )
          .get() as { n: number }
      ).n,
    };
  } finally {
    copy.close();
  }
  syncFile(partial);
  renameSync(partial, target);
  syncFile(dirname(target));
  return { path: target, bytes: statSync(target).size, ...report };
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
