import { existsSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';

/**
 * Which b-trees the commits in a WAL wrote: the WAL's valid frames (those of its current salt)
 * grouped by commit, each frame's page named by `dbstat` (its table or index; "other" for a
 * freelist page). A commit appends one whole page per page it changed, so frames per commit are
 * the pages each write touches. `node dist-bench/test/bench/disk/wal-pages.js DB` prints it.
 */
export interface WalPages {
  /** Where the WAL ended: pass it back to count only the commits after it. */
  mark: WalMark;
  /** Whether a checkpoint reset the WAL after the mark given (then every commit in it counts). */
  reset: boolean;
  pageSize: number;
  commits: number;
  frames: number;
  /** Frames per b-tree name over all commits. */
  byTree: Map<string, number>;
}

export interface WalMark {
  salt: string;
  frames: number;
}

export function walPages(dbPath: string, after?: WalMark): WalPages {
  const walPath = `${dbPath}-wal`;
  const wal = existsSync(walPath) ? readFileSync(walPath) : Buffer.alloc(0);
  if (wal.length < 32) {
    const mark = { salt: '', frames: 0 };
    return {
      mark,
      reset: after !== undefined,
      pageSize: 0,
      commits: 0,
      frames: 0,
      byTree: new Map(),
    };
  }
  const pageSize = wal.readUInt32BE(8) || 65_536;
  const salt = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
  const saltKey = salt.join('.');
  const reset = after !== undefined && after.salt !== saltKey;
  const from = after && !reset ? after.frames : 0;
  const pages: number[] = [];
  let commits = 0;
  let committed = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salt[0] || wal.readUInt32BE(at + 12) !== salt[1]) break;
    pages.push(wal.readUInt32BE(at));
    if (wal.readUInt32BE(at + 4) !== 0) {
      if (pages.length > from) commits += 1;
      committed = pages.length;
    }
  }
  const db = new Database(dbPath, { readonly: true });
  const names = new Map<number, string>();
  try {
    for (const r of db
      .prepare<[], { name: string; pageno: number }>('SELECT name, pageno FROM dbstat')
      .all())
      names.set(r.pageno, r.name);
  } finally {
    db.close();
  }
  const byTree = new Map<string, number>();
  for (const page of pages.slice(from, committed)) {
    const name = names.get(page) ?? 'other';
    byTree.set(name, (byTree.get(name) ?? 0) + 1);
  }
  const mark = { salt: saltKey, frames: committed };
  return { mark, reset, pageSize, commits, frames: committed - from, byTree };
}

/** One line: pages per commit, and per commit for each b-tree, most first. */
export function walSummary(dbPath: string, after?: WalMark): string {
  const w = walPages(dbPath, after);
  if (w.commits === 0) return 'no commit since the last checkpoint reset the WAL';
  const per = (n: number) => (n / w.commits).toFixed(2);
  const trees = [...w.byTree.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ${per(n)}`)
    .join(', ');
  return (
    `${w.commits} commits of ${w.frames} ${w.pageSize}-byte pages, ${per(w.frames)} a commit ` +
    `(${trees})` +
    (w.reset ? '; a checkpoint reset the WAL meanwhile: only the commits after it' : '')
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const db = process.argv[2];
  if (!db) throw new Error('usage: wal-pages.js DATABASE');
  console.log(walSummary(db));
}
