import { statSync } from 'node:fs';
import type { Db } from '../store/database.js';

/** The outbox backlog and the database's size, as a monitor reads them. */
export interface StorageFigures {
  outboxHealth(): { depth: number; oldestUnsentAgeSeconds: number };
  /** Database file plus WAL, in bytes. */
  databaseSizeBytes(): number;
}

/**
 * Storage figures straight from SQLite and the file system. The composition root may pass a
 * richer source with the same two methods (the ops module's StorageHealth) instead.
 */
export function sqliteStorageFigures(db: Db, now: () => number): StorageFigures {
  const backlog = db.prepare<[], { depth: number; oldest: string | null }>(
    'SELECT count(*) AS depth, min(created_at) AS oldest FROM outbox WHERE sent_at IS NULL',
  );
  const fileSize = (file: string): number => {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  };
  return {
    outboxHealth() {
      const row = backlog.get() ?? { depth: 0, oldest: null };
      const ageMs = row.oldest === null ? 0 : Math.max(0, now() - Date.parse(row.oldest));
      return { depth: row.depth, oldestUnsentAgeSeconds: Math.floor(ageMs / 1000) };
    },
    databaseSizeBytes() {
      return db.name === ':memory:' ? 0 : fileSize(db.name) + fileSize(`${db.name}-wal`);
    },
  };
}
