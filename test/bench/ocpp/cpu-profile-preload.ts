import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

/**
 * Loaded into the gateway child (and the bare server) with `--import` (Node refuses --cpu-prof in NODE_OPTIONS): the
 * first SIGUSR2 starts the V8 CPU profiler, the second writes the profile to BENCH_CPU_PROF_DIR.
 * So the profile covers exactly the window the bench chose (saturation), not set-up and shutdown.
 */
const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      session.post('Profiler.enable', () => session.post('Profiler.start'));
      return;
    }
    running = false;
    session.post('Profiler.stop', (err, result) => {
      if (err) throw err;
      const name = process.env.BENCH_CPU_PROF_NAME ?? 'gateway';
      const file = join(dir, `${name}-${process.pid}-${Date.now()}.cpuprofile`);
      writeFileSync(file, JSON.stringify(result.profile));
    });
  });
}
