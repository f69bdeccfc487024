import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

/**
 * Loaded into the gateway child with NODE_OPTIONS=--import (Node 20 refuses --cpu-prof there):
 * profiles the whole process and writes a .cpuprofile (open it in Chrome DevTools) to
 * BENCH_CPU_PROF when the process exits, as --cpu-prof would.
 */
const dir = process.env.BENCH_CPU_PROF;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.start');
  process.once('exit', () => {
    // Same-thread inspector sessions answer synchronously, so this runs before the exit completes.
    session.post('Profiler.stop', (err, result) => {
      if (!err)
        writeFileSync(
          join(dir, `gateway-${process.pid}.cpuprofile`),
          JSON.stringify(result.profile),
        );
    });
  });
}
