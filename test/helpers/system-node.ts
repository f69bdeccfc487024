import { execFileSync } from 'node:child_process';
import { dirname, delimiter } from 'node:path';

/**
 * PATH as a fresh shell has it: without the node_modules/.bin folders npm and npx put first, and
 * without the folder of the Node running the tests (CI's other Node lines come first on PATH). Its
 * `node` is the machine's own (Node 20 on CI), which may be one the gateway does not support.
 */
export function systemPath(): string {
  const own = dirname(process.execPath);
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '' && dir !== own && !dir.split('/').includes('node_modules'))
    .join(delimiter);
}

/** A copy of this process's environment with the system PATH and no npm script variables. */
export function systemEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('npm_') && key !== 'INIT_CWD') env[key] = value;
  env.PATH = systemPath();
  return env;
}

/** The system `node`'s version (`v20.20.2`), or undefined when PATH has none. */
export function systemNodeVersion(): string | undefined {
  try {
    return execFileSync('node', ['--version'], { env: systemEnv(), encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}
