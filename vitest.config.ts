import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most test time is waiting on sockets, timers and fsyncs, not CPU: two files at a time on a
    // 2-core machine take the suite from ~390 s to ~260 s (vitest's default here is one).
    maxWorkers: 2,
  },
});
