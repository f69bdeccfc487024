/** What went wrong with a database file and what the operator can do about it. */
export function databaseAdvice(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown }).code;
  switch (code) {
    case 'SQLITE_READONLY':
    case 'SQLITE_READONLY_DIRECTORY':
    case 'EACCES':
    case 'EPERM':
    case 'SQLITE_PERM':
      return `${message}: the gateway's user must be able to write the file, its -wal and -shm files and their folder`;
    case 'SQLITE_CANTOPEN':
      return `${message}: check that the folder exists and the gateway's user may create files in it`;
    case 'SQLITE_FULL':
      return `${message}: the disk is full; free space (sent outbox rows and old events are pruned, see retention)`;
    case 'SQLITE_NOTADB':
    case 'SQLITE_CORRUPT':
      return `${message}: this is not an intact gateway database; restore the last backup`;
    case 'SQLITE_BUSY':
      return `${message}: another process holds the database locked; try again`;
    default:
      return message;
  }
}
