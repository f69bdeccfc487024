import { defineConfig } from 'vitest/config';

/** Measurements that print figures (npm run measure:*): never part of `npm test`. */
export default defineConfig({
  test: {
    include: ['test/bench/**/*.measure.ts'],
    testTimeout: 30 * 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
