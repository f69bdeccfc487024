import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** process.memoryUsage() with the young generation's committed bytes. */
export interface MemoryUsage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** V8's young generation (new space), committed bytes: part of heapTotal. */
  young: number;
  /** Of rss, /proc's split: anonymous memory, file pages mapped, shared memory (kB → bytes). */
  rssAnon: number;
  rssFile: number;
  rssShmem: number;
}

/** After a full GC as the load left the process, and after a memory-reducing one (settled). */
export interface MemorySnapshot extends MemoryUsage {
  seq: number;
  settled: MemoryUsage;
}

/** Node options and environment that make a child answer `snapshot` (memory-preload.ts). */
export function memoryProbeEnv(file: string): { NODE_OPTIONS: string; BENCH_MEMORY_FILE: string } {
  return {
    NODE_OPTIONS: `--import=${new URL('./memory-preload.js', import.meta.url).href}`,
    BENCH_MEMORY_FILE: file,
  };
}

/** Asks the child for its memory after a full GC; waits (bounded) for its answer. */
export async function snapshot(pid: number, file: string): Promise<MemorySnapshot> {
  const last = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as MemorySnapshot).seq
    : 0;
  process.kill(pid, 'SIGPWR');
  for (let i = 0; i < 1200; i++) {
    await sleep(50);
    if (!existsSync(file)) continue;
    try {
      const m = JSON.parse(readFileSync(file, 'utf8')) as MemorySnapshot;
      if (m.seq > last) return m;
    } catch {
      // Read while being written: the next poll sees it whole.
    }
  }
  throw new Error(`process ${pid} did not write its memory snapshot in 60 s`);
}

/** Per charger, bytes: live heap, V8-known memory outside it, and the rest of the RSS. */
export interface MemoryBreakdown {
  rss: number;
  heapUsed: number;
  heapCommitted: number;
  /** Of heapCommitted: what the young generation grew by. */
  young: number;
  external: number;
  native: number;
  /** Of rss: file pages mapped (code, the database's WAL index) and shared memory. */
  fileAndShared: number;
}

export function perCharger(before: MemoryUsage, after: MemoryUsage, n: number): MemoryBreakdown {
  const d = (k: keyof MemoryUsage) => (after[k] - before[k]) / n;
  return {
    rss: d('rss'),
    heapUsed: d('heapUsed'),
    heapCommitted: d('heapTotal'),
    young: d('young'),
    external: d('external'),
    native: d('rss') - d('heapTotal') - d('external'),
    fileAndShared: d('rssFile') + d('rssShmem'),
  };
}

export function describeBreakdown(b: MemoryBreakdown): string {
  const kb = (x: number) => `${(x / 1024).toFixed(1)} KB`;
  return (
    `RSS ${kb(b.rss)} = JS heap committed ${kb(b.heapCommitted)} (of which young generation ` +
    `${kb(b.young)}; live after GC ${kb(b.heapUsed)}) ` +
    `+ external ${kb(b.external)} + native ${kb(b.native)} (of the RSS, file-backed or shared ` +
    `${kb(b.fileAndShared)})`
  );
}
