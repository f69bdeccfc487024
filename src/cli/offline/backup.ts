import Database from 'better-sqlite3';
import { copyFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { databaseAdvice, DatabaseError } from '../../store/database.js';
import {
  copyKeptFiles,
  filesBeside,
  keptFiles,
  syncPath,
  type FilesCopied,
} from './backup-files.js';

export interface BackupReport {
  path: string;
  bytes: number;
  schemaVersion: number;
  ledgerEntries: number;
  openSessions: number;
  /** The firmware and logs the copy keeps, copied to `<file>.files` beside it. */
  files: FilesCopied;
}

/**
 * An online, consistent copy of the database: `VACUUM INTO` reads one snapshot (a read
 * transaction: in WAL mode the running gateway keeps writing meanwhile and nothing waits), so the
 * copy holds every transaction committed before it began and none after: the ledger and the
 * wallets agree in it. The source is opened read-only and not migrated, so a backup taken before
 * an upgrade is the old schema as it was. The copy is written beside the target, checked
 * (integrity_check), synced, then renamed into place: a backup file that exists is complete.
 * The firmware and logs the copy keeps come along into `<file>.files` (from `filesDir`), checked
 * against their SHA-256 and in place before the database file is.
 */
export function backupDatabase(
  sourcePath: string,
  targetPath: string,
  filesDir: string,
): BackupReport {
  const target = resolve(targetPath);
  for (const taken of [target, filesBeside(target)]) {
    if (existsSync(taken)) {
      throw new Error(`backup file ${taken} already exists: choose a new name or remove it first`);
    }
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
  let report: Omit<BackupReport, 'path' | 'bytes' | 'files'>;
  let kept: ReturnType<typeof keptFiles>;
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
    kept = keptFiles(copy);
  } finally {
    copy.close();
  }
  const filesPartial = `${filesBeside(target)}.partial`;
  rmSync(filesPartial, { recursive: true, force: true });
  let files: FilesCopied;
  try {
    files = copyKeptFiles(kept, filesDir, filesPartial);
  } catch (err) {
    rmSync(partial, { force: true });
    rmSync(filesPartial, { recursive: true, force: true });
    throw err;
  }
  if (files.files > 0) renameSync(filesPartial, filesBeside(target));
  syncPath(partial);
  renameSync(partial, target);
  syncPath(dirname(target));
  return { path: target, bytes: statSync(target).size, ...report, files };
}

/**
 * Puts a backup back: its transfer files into `filesDir`, then the database at `databasePath`,
 * which must not exist (the operator stops the gateway and moves the old database, `-wal` and
 * `-shm` aside first: an old `-wal` beside a restored file would corrupt it).
 */
export function restoreBackup(
  backupPath: string,
  databasePath: string,
  filesDir: string,
): { path: string; files: FilesCopied } {
  const backup = resolve(backupPath);
  if (!existsSync(backup)) throw new Error(`no backup file at ${backup}`);
  for (const old of [databasePath, `${databasePath}-wal`, `${databasePath}-shm`]) {
    if (existsSync(old)) {
      throw new Error(
        `${old} exists: stop the gateway and move the database, its -wal and -shm aside first`,
      );
    }
  }
  let kept: ReturnType<typeof keptFiles>;
  const source = new Database(backup, { readonly: true, fileMustExist: true });
  try {
    const check = source.pragma('integrity_check', { simple: true });
    if (check !== 'ok') throw new Error(`${backup} fails integrity_check: ${String(check)}`);
    kept = keptFiles(source);
  } finally {
    source.close();
  }
  const files = copyKeptFiles(kept, filesBeside(backup), filesDir);
  const partial = `${databasePath}.partial`;
  copyFileSync(backup, partial);
  syncPath(partial);
  renameSync(partial, databasePath);
  syncPath(dirname(resolve(databasePath)));
  return { path: resolve(databasePath), files };
}
