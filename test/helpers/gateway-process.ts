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

export async function spawnGateway(
  configPath: string,
  lines: string[] = [],
  env: Record<string, string> = {},
  /**
   * The configured port, when not 0: readiness is then a GET /healthz that answers, for a gateway
   * whose log level hides the "gateway listening" line (a bench logs at warn).
   */
  knownPort?: number,
): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--config', configPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('gateway did not start in 15 s')), 15_000);
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line);
        if (line.includes('"gateway listening"')) {
          clearTimeout(timer);
          resolve((JSON.parse(line) as { port: number }).port);
        }
      });
    }
    if (knownPort !== undefined) {
      const probe = (): void => {
        fetch(`http://127.0.0.1:${knownPort}/healthz`).then(
          (res) => {
            clearTimeout(timer);
            if (res.ok) resolve(knownPort);
            else reject(new Error(`gateway /healthz answered ${res.status}`));
          },
          () => {
            if (child.exitCode === null) setTimeout(probe, 50);
          },
        );
      };
      probe();
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
