import { readFileSync } from 'node:fs';

/**
 * Bytes a process has caused to be written to storage, from its own I/O counters
 * (`/proc/<pid>/io` `write_bytes`, Linux): every page it dirtied in the page cache of a file
 * (the database, its WAL and shared-memory index, a checkpoint's copies), counted once per 4 KiB
 * page when the page goes from clean to dirty. A file on tmpfs counts nothing.
 */
export function writeBytes(pid: number): number {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const bytes = /^write_bytes: (\d+)$/m.exec(io)?.[1];
  if (bytes === undefined) throw new Error(`no write_bytes for process ${pid}`);
  return Number(bytes);
}
