import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(import.meta.dirname, '..', '..');
const SIMULATORS = join(ROOT, 'simulators');

/** A simulator's built CLI: dist/simulators/<folder>/cli.js. */
export function simulatorCli(folder: 'ocpp16' | 'ocpp201' | 'ocpp21'): string {
  return join(ROOT, 'dist', 'simulators', folder, 'cli.js');
}

function newestSourceMs(dir: string): number {
  return Math.max(
    ...readdirSync(dir, { withFileTypes: true }).map((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? newestSourceMs(path) : statSync(path).mtimeMs;
    }),
  );
}

/** `npm test` builds first; a bare vitest run compiles the simulators if `cli` is stale. */
export async function buildSimulatorsIfStale(cli: string): Promise<void> {
  let builtMs = 0;
  try {
    builtMs = statSync(cli).mtimeMs;
  } catch {
    // not built yet
  }
  if (builtMs >= newestSourceMs(SIMULATORS)) return;
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  await promisify(execFile)(process.execPath, [tsc, '-p', join(SIMULATORS, 'tsconfig.json')]);
}
