import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Where firmware and logs are kept: `transfers.directory`, else `files` beside the database. */
export function transferDirectory(config: {
  transfers: { directory?: string | undefined };
  database: { path: string };
}): string {
  if (config.transfers.directory !== undefined) return config.transfers.directory;
  if (config.database.path === ':memory:') {
    return join(tmpdir(), `fleet-gateway-files-${process.pid}`);
  }
  return join(dirname(config.database.path), 'files');
}
