import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // SQLite files and loopback servers are per test file; two workers suit the 2-core machines.
    pool: 'forks',
    maxWorkers: 2,
  },
});
