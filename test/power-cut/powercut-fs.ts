import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * powercut-fs (powercut-fs.c beside this file): a FUSE mount over a backing folder whose writes
 * since each file's last fsync, and names since their folder's last fsync, are dropped on command,
 * as a power cut would drop them ([Development](../../docs/development.md#power-cut-test)).
 */

const SOURCE = join(import.meta.dirname, 'powercut-fs.c');

export interface CutCounts {
  files: number;
  bytes: number;
  pages: number;
  names: number;
}

/** What the file system holds unsynced now, and what its last cut dropped. */
export interface PowerCutCounters {
  pendingFiles: number;
  pendingBytes: number;
  pendingPages: number;
  pendingNames: number;
  cuts: number;
  syncs: number;
  lastCut: CutCounts;
}

export interface PowerCutFs {
  /** The mounted folder: the gateway's files go here. */
  mount: string;
  /** The folder behind it: after a cut it holds exactly what survived. */
  backing: string;
  /** Drops every unsynced write and name; answers what was dropped. Kill the writers first. */
  cut(): CutCounts;
  /** Everything written so far becomes durable (a baseline, as after an installation). */
  syncAll(): void;
  counters(): PowerCutCounters;
  /** The file system's own lines (one per cut, and any error restoring a file). */
  log: string[];
  close(): Promise<void>;
}

let built: string | undefined;

/**
 * Compiles powercut-fs against Debian's libfuse3 (once per source version, in the temp folder).
 * Anything missing fails loudly: the power-cut tests never skip.
 */
export function buildPowerCutFs(): string {
  if (built) return built;
  if (!existsSync('/dev/fuse')) {
    throw new Error(
      'no /dev/fuse: the power-cut tests need FUSE (the kernel module; in a container, --device /dev/fuse)',
    );
  }
  const flags = spawnSync('pkg-config', ['--cflags', '--libs', 'fuse3'], { encoding: 'utf8' });
  if (flags.status !== 0 || spawnSync('fusermount3', ['-V']).error) {
    throw new Error(
      'libfuse3 is missing: apt-get install fuse3 libfuse3-dev pkg-config (.ci/run installs them)',
    );
  }
  const source = readFileSync(SOURCE);
  const hash = createHash('sha256').update(source).update(flags.stdout).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), `fleetgw-powercut-fs-${hash}`);
  const binary = join(dir, 'powercut-fs');
  if (!existsSync(binary)) {
    mkdirSync(dir, { recursive: true });
    // Built beside and renamed: test files in other workers may build it at the same time.
    const partial = `${binary}.${process.pid}`;
    const cc = spawnSync(
      'cc',
      [
        '-std=c11',
        '-O2',
        '-Wall',
        '-Wextra',
        '-Werror',
        '-o',
        partial,
        SOURCE,
        ...flags.stdout.trim().split(/\s+/),
      ],
      { encoding: 'utf8' },
    );
    if (cc.status !== 0) {
      throw new Error(`building powercut-fs with cc failed:\n${cc.error?.message ?? cc.stderr}`);
    }
    renameSync(partial, binary);
  }
  built = binary;
  return binary;
}

/** Mounts a fresh powercut-fs over a fresh backing folder. */
export async function mountPowerCutFs(): Promise<PowerCutFs> {
  const binary = buildPowerCutFs();
  const backing = mkdtempSync(join(tmpdir(), 'fleetgw-powercut-backing-'));
  const mount = mkdtempSync(join(tmpdir(), 'fleetgw-powercut-mount-'));
  const control = join(mount, '.powercut');
  const log: string[] = [];
  const child = spawn(binary, [backing, mount], { stdio: ['ignore', 'ignore', 'pipe'] });
  createInterface({ input: child.stderr }).on('line', (line) => log.push(line));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    await mounted(child, control, log);
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    rmSync(backing, { recursive: true, force: true });
    rmSync(mount, { recursive: true, force: true });
    throw err;
  }
  const counters = () => JSON.parse(readFileSync(control, 'utf8')) as PowerCutCounters;
  return {
    mount,
    backing,
    log,
    counters,
    cut() {
      writeFileSync(control, 'drop');
      return counters().lastCut;
    },
    syncAll() {
      writeFileSync(control, 'sync');
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        // libfuse unmounts on SIGTERM; fusermount3 (auto_unmount) does it if the process dies.
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      await unmounted(mount);
      rmSync(mount, { recursive: true, force: true });
      rmSync(backing, { recursive: true, force: true });
    },
  };
}

async function mounted(child: ChildProcess, control: string, log: string[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!existsSync(control)) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      throw new Error(`powercut-fs did not mount: ${log.join('\n') || 'no output'}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function unmounted(mount: string): Promise<void> {
  const deadline = Date.now() + 5000;
  const listed = () => readFileSync('/proc/self/mounts', 'utf8').includes(` ${mount} `);
  while (listed()) {
    if (Date.now() > deadline) {
      spawnSync('fusermount3', ['-u', '-z', mount]);
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
