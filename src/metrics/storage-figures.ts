/**
 * The outbox backlog and the database's size, as a monitor reads them (the ops module's
 * StorageHealth provides both).
 */
export interface StorageFigures {
  outboxHealth(): { depth: number; oldestUnsentAgeSeconds: number };
  /** Database file plus WAL, in bytes. */
  databaseSizeBytes(): number;
}
