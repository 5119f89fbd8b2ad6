import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRandom } from '../../src/simulator/random.js';
import {
  killAt,
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  type KillPoint,
  type RunningCli,
} from '../helpers/cli.js';
import {
  countRows,
  createTestDatabase,
  expectDatabaseIntact,
  queryAll,
  reading,
  type TestDatabase,
} from '../helpers/engine.js';

/*
 * SIGKILL at random points of sync, backfill and the daemon, each followed by a restart. After
 * every kill the database passes the engine's own check (integrity_check on SQLite; see
 * expectDatabaseIntact) and keeps every row committed before it; at the end one clean cycle
 * makes it equal the simulator's truth. The processes get the project's database: a SQLite file,
 * or a postgres:// URL. The webhook receiver's kills are in kill-intake.test.ts.
 *
 * A kill point is an event of the process's own work, not a time since it was spawned: after its
 * n-th API call (a debug log line), n seeded, then a seeded few milliseconds more; n = 0 kills it
 * at its first log line, as it starts. A busy machine spends a fixed delay loading node, so
 * most kills would land before any work; these land in the work on any machine.
 */

const DAY = 86_400_000;
let sim: RunningCli & { url: string };
let database: TestDatabase;
let dbPath: string;
let env: NodeJS.ProcessEnv;

// Seeded kill points, so a failing run can be replayed.
const random = createRandom(20261121);

const API_CALL = /"msg":"api call"/;

/** A seeded kill point among a process's first `calls` API calls, logged to `stream`. */
function killPoint(calls: number, stream: 'stdout' | 'stderr'): KillPoint {
  const n = random.int(0, calls - 1);
  const thenMs = random.int(0, 29);
  const event = n === 0 ? { pattern: /^/, count: 1 } : { pattern: API_CALL, count: n };
  return { ...event, thenMs, stream };
}

beforeAll(async () => {
  sim = await startSimulatorProcess([
    '--requests',
    '400',
    '--mutate-every',
    '200',
    '--mutate-per-tick',
    '4',
  ]);
  database = await createTestDatabase('killed.db');
  dbPath = database.location;
  env = serviceEnv(sim.url, {
    TRANSPORT_DB: dbPath,
    TRANSPORT_POLL_CRON: '* * * * * *',
    TRANSPORT_CONCURRENCY: '8',
  });
});
afterAll(async () => {
  sim.child.kill('SIGTERM');
  await sim.exited;
  await database.drop();
});

function snapshot(): Promise<Map<string, string | null>> {
  return reading(dbPath, async (db) => {
    const rows = await queryAll<{ request_id: string; at: string | null }>(
      db,
      'SELECT request_id, last_updated_timestamp_utc AS at FROM requests',
    );
    return new Map(rows.map((row) => [row.request_id, row.at]));
  });
}

async function expectIntactAfterKill(before: Map<string, string | null>): Promise<void> {
  await reading(dbPath, expectDatabaseIntact);
  const after = await snapshot();
  for (const [id, at] of before) {
    expect(after.has(id), `committed request ${id} lost`).toBe(true);
    // A later write may move last_updated forward, never back.
    if (at !== null) expect(after.get(id)! >= at, id).toBe(true);
  }
}

/** Most runs of one kind that may end on their own before their kill point. */
const MOST_TRIES = 3;

/**
 * Runs `args` and kills it at a seeded point among its first `calls` API calls; checks the
 * database after each run. A run that finished before its point (a sync with little to do) is
 * checked and run again, its point now among the calls the finished run made, so every kill
 * counted is a real one.
 */
async function killOnce(
  args: string[],
  calls: number,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<void> {
  let within = calls;
  for (let attempt = 1; attempt <= MOST_TRIES; attempt += 1) {
    const before = await snapshot();
    const process = startCli(args, { ...env, ...extraEnv, LOG_LEVEL: 'debug' });
    // The daemon logs to stdout (journald), one-shot commands to stderr.
    const stream = args[0] === 'run' ? 'stdout' : 'stderr';
    const result = await killAt(process, killPoint(within, stream));
    await expectIntactAfterKill(before);
    if (result.signal === 'SIGKILL') return;
    expect(result.code, result.stderr).toBe(0);
    const log = stream === 'stdout' ? result.stdout : result.stderr;
    within = Math.max(1, log.split('\n').filter((line) => API_CALL.test(line)).length);
  }
  throw new Error(`${args[0]} ended on its own before ${MOST_TRIES} kill points`);
}

describe('SIGKILL at random points', () => {
  it('loses no committed row across 24 kills of sync, backfill and the daemon, then converges', async () => {
    expect((await runCli(['migrate'], env)).code).toBe(0);
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    // 24 windows of two days, each one checkpoint: about 15 list calls a window.
    const backfillArgs = [
      'backfill',
      '--from',
      day(Date.now() - 31 * DAY),
      '--to',
      day(Date.now() + 15 * DAY),
      '--chunk-hours',
      '48',
    ];
    // Calls a run makes: a sync 20 to 100 (4 lists, then the details of what changed); a
    // backfill about 400 in all, two windows at once (TRANSPORT_CONCURRENCY 4), a pair of windows
    // done about every 22 calls, so 8 kills among a run's first 40 leave a few windows finished
    // and the last run the rest to resume (at 8, four windows at once finish together after
    // some 45 calls); the daemon 30 to 100 a cycle, so its kills spread over its start and first
    // cycle.
    const kinds = [
      { args: ['sync'], calls: 40 },
      { args: backfillArgs, calls: 40, env: { TRANSPORT_CONCURRENCY: '4' } },
      { args: ['run'], calls: 60 },
    ];
    let kills = 0;
    for (let round = 0; round < 8; round += 1) {
      for (const kind of kinds) {
        await killOnce(kind.args, kind.calls, kind.env);
        kills += 1;
      }
    }
    expect(kills).toBe(24);

    // The backfill resumes from its checkpoints and finishes; one clean cycle brings the rest.
    const backfill = await runCli(backfillArgs, env);
    expect(backfill.code, backfill.stderr).toBe(0);
    expect(backfill.stdout).toMatch(/backfill ok: 24\/24 windows \([1-9]\d* done before\)/);
    await fetch(`${sim.url}/_sim/stop-mutating/`, { method: 'POST' });
    await fetch(`${sim.url}/_sim/faults/`, {
      method: 'POST',
      body: JSON.stringify({}),
      headers: { 'content-type': 'application/json' },
    });
    // One cycle at start, no more; it closes the runs the kills left open (their processes are gone).
    const daemon = startCli(['run'], { ...env, TRANSPORT_POLL_CRON: '0 0 1 1 *' });
    await daemon.waitFor(/"msg":"poll cycle finished"/);
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
    await reading(dbPath, expectDatabaseIntact);
    const running = await reading(dbPath, (db) => countRows(db, 'sync_runs', "status = 'running'"));
    expect(running).toBe(0);
    // One clean cycle made the mirror equal the (now frozen) truth in the poll window.
    const truth = (await (await fetch(`${sim.url}/_sim/truth/`)).json()) as {
      requestId: string;
      isVisible: boolean;
      listState: string;
      eventDtUtc: string;
      lastUpdatedTimestampUtc: string;
    }[];
    const from = new Date(Date.now() - 72 * 3_600_000 + 60_000).toISOString();
    const to = new Date(Date.now() + 336 * 3_600_000 - 60_000).toISOString();
    const expected = truth
      .filter(
        (t) =>
          t.isVisible && t.listState !== 'awaiting' && t.eventDtUtc >= from && t.eventDtUtc <= to,
      )
      .map((t) => [t.requestId, t.listState, t.lastUpdatedTimestampUtc]);
    const stored = await reading(dbPath, (db) =>
      queryAll<{ request_id: string; list_state: string; last_updated_timestamp_utc: string }>(
        db,
        'SELECT request_id, list_state, last_updated_timestamp_utc FROM requests',
      ),
    );
    const byId = new Map(stored.map((row) => [row.request_id, row]));
    const actual = expected.map(([id]) => {
      const row = byId.get(id!);
      return [id, row?.list_state, row?.last_updated_timestamp_utc];
    });
    expect(expected.length).toBeGreaterThan(50);
    expect(actual).toEqual(expected);
    // 24 processes started, migrated and killed one after another, a run that ends before its
    // kill point run again: on PostgreSQL beside the whole suite, 94 s was seen, and 120 s ran out.
  }, 240_000);
});
