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
