/** Nearest-rank percentile of already-collected samples (`p` in 0..100); NaN when empty. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export function mean(samples: readonly number[]): number {
  return samples.length === 0 ? Number.NaN : samples.reduce((a, b) => a + b, 0) / samples.length;
}

/** Milliseconds since `start` (a `process.hrtime.bigint()` reading), fractional. */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Resident set size of a process in bytes, from /proc (Linux): the figure an operator's `top` shows. */
export async function rssBytes(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) * 1024;
}

/**
 * CPU time a process has used, user and system, in seconds, from /proc (Linux: its clock ticks are
 * USER_HZ, 100 a second, whatever the kernel's own rate). The difference over a load window divided
 * by the requests answered is the CPU each request cost that process: steadier than a rate on a
 * shared machine, where a rate also measures what the neighbours took.
 */
export async function cpuSeconds(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) {
    throw new Error(`no CPU times for process ${pid}`);
  }
  return (utime + stime) / 100;
}

/**
 * CPU seconds each thread of a process has used, summed by thread name (`comm`: the main
 * thread is `main`, `V8Worker` V8's GC and compiler helpers, `libuv-worker` the thread pool):
 * what tells a process's own JavaScript from its garbage collection when the totals differ.
 */
export async function cpuSecondsByThread(pid: number): Promise<Map<string, number>> {
  const { readFile, readdir } = await import('node:fs/promises');
  const byName = new Map<string, number>();
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    try {
      const [stat, comm] = await Promise.all([
        readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8'),
        readFile(`/proc/${pid}/task/${tid}/comm`, 'utf8'),
      ]);
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / 100;
      const name = Number(tid) === pid ? 'main' : comm.trim();
      byName.set(name, (byName.get(name) ?? 0) + seconds);
    } catch {
      // The thread ended between the listing and the read: its time is gone with it.
    }
  }
  return byName;
}

/** `after − before` per thread name, as % of one core over `seconds`, largest first. */
export function threadShares(
  before: Map<string, number>,
  after: Map<string, number>,
  seconds: number,
): [string, number][] {
  return [...after]
    .map(([name, s]): [string, number] => [name, ((s - (before.get(name) ?? 0)) / seconds) * 100])
    .filter(([, pct]) => pct > 0)
    .sort((a, b) => b[1] - a[1]);
}

/** A figure measured once per round: the median of the rounds, with their lowest and highest. */
export interface Spread {
  median: number;
  low: number;
  high: number;
  rounds: number;
}

/** The median (the mean of the middle two for an even count) and min–max of per-round figures. */
export function spreadOf(rounds: readonly number[]): Spread {
  const sorted = rounds.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return { median: Number.NaN, low: Number.NaN, high: Number.NaN, rounds: 0 };
  const mid = Math.floor(n / 2);
  const median = n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, low: sorted[0]!, high: sorted[n - 1]!, rounds: n };
}
