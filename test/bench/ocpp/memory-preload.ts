import { writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics, setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Loaded with `--import` into the gateway and the bare server of the OCPP section: each SIGPWR
 * (unused by Node and by the other preloads) runs a full garbage collection and writes
 * process.memoryUsage() to BENCH_MEMORY_FILE, so the section can split the RSS a charger costs
 * into live JS heap, memory outside the heap that V8 knows of (ws buffers: `external`) and the
 * rest (malloc: SQLite, sockets, libuv, fragmentation), and the committed heap into V8's young
 * generation (sized by V8 from the allocation rate, up to a maximum it derives from the machine's
 * memory) and the rest. With BENCH_OCPP_HEAP_DIR=dir each
 * snapshot also writes a V8 heap snapshot there (slow: for finding what a charger holds, not for
 * a timed run).
 */
const file = process.env.BENCH_MEMORY_FILE;
if (file) {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  let seq = 0;
  process.on('SIGPWR', () => {
    gc();
    seq += 1;
    const snapshots = process.env.BENCH_OCPP_HEAP_DIR;
    if (snapshots) writeHeapSnapshot(`${snapshots}/heap-${process.pid}-${seq}.heapsnapshot`);
    const young = getHeapSpaceStatistics()
      .filter(
        (space) =>
          space.space_name === 'new_space' || space.space_name === 'new_large_object_space',
      )
      .reduce((sum, space) => sum + space.space_size, 0);
    writeFileSync(file, JSON.stringify({ seq, ...process.memoryUsage(), young }));
  });
}
