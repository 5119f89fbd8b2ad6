import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * One project's files after the other's, each longest first. Vitest's own order takes a file it
 * has no timing for by size: the end-to-end files (processes, timers: the package install alone
 * takes minutes) could start last and leave the other workers idle at the end. Timings of an
 * earlier run decide when there are some; otherwise e2e, then integration, then unit.
 *
 * The projects stay apart because a worker runs the next file only if it is of its own project;
 * otherwise vitest ends it and starts another, which loads src and its libraries again. With the
 * two projects mixed, a run started some 60 workers instead of 8. PostgreSQL's go first: its
 * longest files (the kill runs) are longer than SQLite's.
 */
class ByProjectLongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const expectedMs = (spec: TestSpecification) => {
      const key = `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
      const known = this.ctx.cache.getFileTestResults(key)?.duration;
      if (known !== undefined) return known;
      if (spec.moduleId.includes('/test/e2e/')) return 60_000;
      return spec.moduleId.includes('/test/integration/') ? 10_000 : 1_000;
    };
    const rank = (spec: TestSpecification) => (spec.project.name === 'postgres' ? 0 : 1);
    return [...files].sort((a, b) => rank(a) - rank(b) || expectedMs(b) - expectedMs(a));
  }
}

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

/** Integration files that open no database (the simulator alone): the engine changes nothing. */
const ENGINE_FREE = ['test/integration/simulator/**', 'test/integration/webhooks/cli.test.ts'];

/*
 * test/slow holds runs that measure the wall clock: an outage at the service's own pace, the demo
 * watched for 40 s.
 * `npm test` leaves them out; `npm run test:slow` sets TRANSPORT_TEST_SLOW=1 to run them alone.
 */
const isSlowRun = process.env.TRANSPORT_TEST_SLOW === '1';

/*
 * test/long holds runs of ten minutes and more (both feed sinks away for ten minutes), on both
 * engines. `npm test` and `npm run test:slow` leave them out; `npm run test:long` sets
 * TRANSPORT_TEST_LONG=1 and names the folder, to run them alone.
 */
const isLongRun = process.env.TRANSPORT_TEST_LONG === '1';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Databases and loopback servers are per test file. Four workers on the 2-core machines: the
    // end-to-end files spend much of their time waiting on the processes they start.
    pool: 'forks',
    // A worker runs its files one after another in one module graph, instead of a fresh process
    // per file: loading src and its libraries again for each of some 180 files was a third of the
    // suite's CPU. A file restores what it changes in the process: nock (test/helpers/api.ts
    // useNock), fake timers, signal handlers, listeners.
    isolate: false,
    restoreMocks: true,
    unstubEnvs: true,
    unstubGlobals: true,
    setupFiles: ['test/setup/sqlite-pin.ts', 'test/setup/nesting-check.ts'],
    maxWorkers: 4,
    sequence: { sequencer: ByProjectLongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: isSlowRun ? ['test/slow/**/*.test.ts'] : ['test/**/*.test.ts'],
          // Several daemons on one database, transactions side by side: PostgreSQL's alone.
          exclude: [
            'test/**/postgres-*.test.ts',
            ...(isSlowRun ? [] : ['test/slow/**']),
            ...(isLongRun ? [] : ['test/long/**']),
          ],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: [
            'test/integration/**/*.test.ts',
            'test/e2e/kill.test.ts',
            'test/e2e/kill-intake.test.ts',
            'test/e2e/changes.test.ts',
            'test/e2e/feed-webhook.test.ts',
            'test/e2e/postgres-*.test.ts',
            ...(isLongRun ? ['test/long/**/*.test.ts'] : []),
          ],
          exclude: [...SQLITE_ONLY, ...ENGINE_FREE],
          globalSetup: ['test/setup/postgres-server.ts'],
        },
      },
    ],
  },
});
