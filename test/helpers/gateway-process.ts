import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';

/** The project root: the nearest folder with a package.json (this file also runs compiled, from dist-bench/). */
function projectRoot(from: string): string {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
  }
  throw new Error(`no package.json above ${from}`);
}

const CLI = join(projectRoot(import.meta.dirname), 'dist', 'cli.js');

/** `fleet-gateway serve` as a child process (built dist), so a test can SIGKILL it for real. */
export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  ocppUrl: string;
  /** Every log line so far (pino JSON) of this process. */
  lines: string[];
  kill(): Promise<void>;
}

export interface SpawnOptions {
  /**
   * RLIMIT_FSIZE of the gateway (KiB): a write that would make any file larger fails (EFBIG),
   * as on a full disk, for this process only.
   */
  fileSizeLimitKiB?: number;
  /** How long to wait for "gateway listening" (default 15 s; a loaded machine may need more). */
  startTimeoutMs?: number;
}

export async function spawnGateway(
  configPath: string,
  lines: string[] = [],
  env: Record<string, string> = {},
  options: SpawnOptions = {},
): Promise<GatewayProcess> {
  const args = [CLI, 'serve', '--config', configPath];
  const limited = options.fileSizeLimitKiB;
  const child = spawn(
    limited === undefined ? process.execPath : 'bash',
    limited === undefined
      ? args
      : ['-c', `ulimit -f ${limited} && exec "$0" "$@"`, process.execPath, ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await new Promise<number>((resolve, reject) => {
    const wait = options.startTimeoutMs ?? 15_000;
    const timer = setTimeout(
      () => reject(new Error(`gateway did not start in ${wait / 1000} s`)),
      wait,
    );
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line);
        if (line.includes('"gateway listening"')) {
          clearTimeout(timer);
          resolve((JSON.parse(line) as { port: number }).port);
        }
      });
    }
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}: ${lines.slice(-5).join('\n')}`));
    });
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    ocppUrl: `ws://127.0.0.1:${port}/ocpp`,
    lines,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
