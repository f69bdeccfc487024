import { readFileSync, writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics, setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Loaded with `--import` into the gateway and the bare server of the OCPP section: each SIGPWR
 * (unused by Node and by the other preloads) writes to BENCH_MEMORY_FILE the process's memory
 * twice over:
 * - after a full garbage collection: process.memoryUsage(), and V8's young generation (new space,
 *   sized by V8 from the allocation rate up to a maximum it derives from the machine's memory) as
 *   the load left it;
 * - `settled`: the same after a memory-reducing collection, the one V8's memory reducer runs by
 *   itself seconds after the allocation rate drops (docs/benchmarks.md measured it at a site's
 *   message rates): the young generation shrunk and freed pages given back, so what is left is
 *   what the process holds, not what its last burst needed.
 * With BENCH_OCPP_HEAP_DIR=dir each snapshot also writes a V8 heap snapshot there (slow: for
 * finding what a charger holds, not for a timed run).
 */
const file = process.env.BENCH_MEMORY_FILE;

interface GcOptions {
  type: 'major';
  execution: 'sync';
  flavor: 'regular' | 'last-resort';
}

function young(): number {
  return getHeapSpaceStatistics()
    .filter(
      (space) => space.space_name === 'new_space' || space.space_name === 'new_large_object_space',
    )
    .reduce((sum, space) => sum + space.space_size, 0);
}

/** /proc's split of the resident set (Linux; zeros elsewhere). */
function rssSplit(): { rssAnon: number; rssFile: number; rssShmem: number } {
  let status = '';
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    // Not Linux: the split is unknown.
  }
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rssAnon: kb('RssAnon'), rssFile: kb('RssFile'), rssShmem: kb('RssShmem') };
}

if (file) {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options: GcOptions) => void;
  let seq = 0;
  process.on('SIGPWR', () => {
    gc({ type: 'major', execution: 'sync', flavor: 'regular' });
    seq += 1;
    const snapshots = process.env.BENCH_OCPP_HEAP_DIR;
    if (snapshots) writeHeapSnapshot(`${snapshots}/heap-${process.pid}-${seq}.heapsnapshot`);
    const loaded = { ...process.memoryUsage(), young: young(), ...rssSplit() };
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const settled = { ...process.memoryUsage(), young: young(), ...rssSplit() };
    writeFileSync(file, JSON.stringify({ seq, ...loaded, settled }));
  });
}
