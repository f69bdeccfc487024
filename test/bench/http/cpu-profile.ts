import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Preload for profiling a bench child: `NODE_OPTIONS=--import=<this file>` with
 * BENCH_CPU_PROF_DIR set (node refuses --cpu-prof in NODE_OPTIONS). Writes a .cpuprofile, which
 * Chrome DevTools opens, when the process exits cleanly (SIGTERM).
 */
const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  process.once('exit', () => {
    // The same-thread inspector session answers synchronously, so this works in an exit handler.
    session.post('Profiler.stop', (err, result) => {
      if (!err) {
        writeFileSync(
          join(dir, `gateway-${process.pid}.cpuprofile`),
          JSON.stringify(result.profile),
        );
      }
    });
  });
}
