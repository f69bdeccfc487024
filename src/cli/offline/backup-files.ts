import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { join } from 'node:path';

/** A kept transfer file as a database names it (migrations/021-transfers.ts). */
interface KeptFile {
  fileId: string;
  kind: string;
  sha256: string;
}

export interface FilesCopied {
  files: number;
  bytes: number;
  /** Files the database names that were not there to copy (deleted after the snapshot, or lost). */
  missing: string[];
}

/** The folder a backup's transfer files go in, beside the database copy. */
export const filesBeside = (backupPath: string) => `${backupPath}.files`;

/** The firmware and logs a database keeps: none before transfers existed, deleted ones not. */
export function keptFiles(db: Database.Database): KeptFile[] {
  const columns = db.prepare("SELECT name FROM pragma_table_info('transfer_files')").all() as {
    name: string;
  }[];
  if (columns.length === 0) return [];
  const kept = columns.some((c) => c.name === 'deleted_at') ? 'WHERE deleted_at IS NULL' : '';
  return db
    .prepare(`SELECT file_id AS fileId, kind, sha256 FROM transfer_files ${kept}`)
    .all() as KeptFile[];
}

/**
 * Copies each file from `fromDir` to `toDir` (both `<kind>/<fileId>`), checking that what arrived
 * has the SHA-256 the database records; each appears whole or not at all (written aside, synced,
 * renamed). A file absent at the source is reported, not an error: it may have been deleted since.
 */
export function copyKeptFiles(files: KeptFile[], fromDir: string, toDir: string): FilesCopied {
  const copied: FilesCopied = { files: 0, bytes: 0, missing: [] };
  for (const file of files) {
    const from = join(fromDir, file.kind, file.fileId);
    if (!existsSync(from)) {
      copied.missing.push(file.fileId);
      continue;
    }
    mkdirSync(join(toDir, file.kind), { recursive: true });
    const to = join(toDir, file.kind, file.fileId);
    const partial = `${to}.part`;
    copyFileSync(from, partial);
    const { sha256, size } = hashOf(partial);
    if (sha256 !== file.sha256) {
      rmSync(partial, { force: true });
      throw new Error(`${from} does not hold what the database records (SHA-256 ${file.sha256})`);
    }
    syncPath(partial);
    renameSync(partial, to);
    copied.files += 1;
    copied.bytes += size;
  }
  for (const kind of new Set(files.map((f) => f.kind))) {
    if (existsSync(join(toDir, kind))) syncPath(join(toDir, kind));
  }
  return copied;
}

/** A file's SHA-256, read a chunk at a time (firmware may be hundreds of megabytes). */
function hashOf(path: string): { sha256: string; size: number } {
  const hash = createHash('sha256');
  const chunk = Buffer.alloc(1 << 20);
  const fd = openSync(path, 'r');
  let size = 0;
  try {
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) {
      hash.update(chunk.subarray(0, n));
      size += n;
    }
  } finally {
    closeSync(fd);
  }
  return { sha256: hash.digest('hex'), size };
}

export function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
