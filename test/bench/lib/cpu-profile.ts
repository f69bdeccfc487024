import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

/**
 * Loaded into every bench gateway child with NODE_OPTIONS=--import when BENCH_CPU_PROF=dir is set
 * (Node 20 refuses --cpu-prof in NODE_OPTIONS): profiles the whole process and writes a
 * .cpuprofile (open it in Chrome DevTools) there when the process exits cleanly (GatewayChild.stop
 * sends SIGTERM), as --cpu-prof would.
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
