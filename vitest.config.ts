import { defineConfig } from 'vitest/config';

/*
 * Two projects. `sqlite` runs every test on the embedded default. `postgres` runs the
 * integration suite (faults and kills included) again on PostgreSQL: a server named by
 * TRANSPORT_TEST_DATABASE_URL, or a throwaway one it starts (test/setup/postgres-server.ts).
 * Files left out of it test what only SQLite has (its file, its locks, its backup); such tests
 * live in files named *.sqlite.test.ts.
 */
const SQLITE_ONLY = [
  '**/*.sqlite.test.ts',
  'test/integration/db/database-faults.test.ts',
  'test/integration/ops/backup-retention.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Databases and loopback servers are per test file; two workers suit the 2-core machines.
    pool: 'forks',
    setupFiles: ['test/setup/sqlite-pin.ts'],
    maxWorkers: 4,
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          // Several daemons on one database: PostgreSQL's alone.
          exclude: ['test/e2e/postgres-*.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: [
            'test/integration/**/*.test.ts',
            'test/e2e/kill.test.ts',
            'test/e2e/postgres-*.test.ts',
          ],
          exclude: SQLITE_ONLY,
          globalSetup: ['test/setup/postgres-server.ts'],
        },
      },
    ],
  },
});
