import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import type { Connection } from '../../src/db/sql.js';
import {
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  type RunningCli,
  freePort,
} from '../helpers/cli.js';
import {
  countRows,
  createTestDatabase,
  expectDatabaseIntact,
  queryAll,
  type TestDatabase,
} from '../helpers/engine.js';
import { tempDir } from '../helpers/records.js';

/*
 * SIGKILL at random points of sync, backfill and the daemon, each followed by a restart. After
 * every kill the database passes the engine's own check (integrity_check on SQLite; see
 * expectDatabaseIntact) and keeps every row committed before it; at the end one clean cycle
 * makes it equal the simulator's truth. The processes get the project's database: a SQLite file,
 * or a postgres:// URL.
 */

const DAY = 86_400_000;
let sim: RunningCli & { url: string };
let database: TestDatabase;
let dbPath: string;
let env: NodeJS.ProcessEnv;

// A seeded sequence of kill delays, so a failing run can be replayed.
let seed = 20261121;
const nextDelayMs = (min: number, max: number) => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return min + (seed % (max - min));
};

beforeAll(async () => {
  sim = await startSimulatorProcess([
    '--requests',
    '400',
    '--latency',
    '4',
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

/** Reads an existing database the CLI wrote, read-only, as another program would. */
async function reading<T>(location: string, work: (db: Connection) => Promise<T>): Promise<T> {
  const db = await openDatabase({ location, isReadOnly: true, shouldMigrate: false });
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

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

async function killAfter(process: RunningCli, delayMs: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  process.child.kill('SIGKILL');
  const result = await process.exited;
  expect(result.signal === 'SIGKILL' || result.code === 0).toBe(true);
}

describe('SIGKILL at random points', () => {
  it('loses no committed row across 24 kills of sync, backfill and the daemon, then converges', async () => {
    expect((await runCli(['migrate'], env)).code).toBe(0);
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const backfillArgs = [
      'backfill',
      '--from',
      day(Date.now() - 31 * DAY),
      '--to',
      day(Date.now() + 15 * DAY),
      '--chunk-hours',
      '12',
    ];
    const kinds = [
      { name: 'sync', args: ['sync'], min: 30, max: 600 },
      { name: 'backfill', args: backfillArgs, min: 100, max: 1_500 },
      { name: 'run', args: ['run'], min: 100, max: 2_500 },
    ];
    let kills = 0;
    for (let round = 0; round < 8; round += 1) {
      for (const kind of kinds) {
        const before = await snapshot();
        const process = startCli(kind.args, env);
        await killAfter(process, nextDelayMs(kind.min, kind.max));
        await expectIntactAfterKill(before);
        kills += 1;
      }
    }
    expect(kills).toBe(24);

    // The backfill resumes from its checkpoints and finishes; one clean cycle brings the rest.
    const backfill = await runCli(backfillArgs, env);
    expect(backfill.code, backfill.stderr).toBe(0);
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
  }, 120_000);
});

describe('SIGKILL during webhook intake', () => {
  it('loses no acknowledged event across 6 kills, and applies every stored event after a restart', async () => {
    const port = await freePort();
    const dir = tempDir();
    const keyFile = join(dir, 'key.pem');
    const hooks = await startSimulatorProcess([
      '--requests',
      '40',
      '--mutate-every',
      '40',
      '--mutate-per-tick',
      '4',
      '--webhook-url',
      `http://127.0.0.1:${port}/webhooks/`,
      '--webhook-public-key-file',
      keyFile,
    ]);
    const hooksDatabase = await createTestDatabase('hooks.db');
    const hooksDb = hooksDatabase.location;
    const hooksEnv = serviceEnv(hooks.url, {
      TRANSPORT_DB: hooksDb,
      TRANSPORT_POLL: 'off',
      TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
      TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: keyFile,
    });
    // Empty until the daemon has created the database (SQLite) or its tables (PostgreSQL).
    const storedEvents = async () => {
      try {
        const rows = await reading(hooksDb, (db) =>
          queryAll<{ event_id: string }>(db, 'SELECT event_id FROM webhook_events'),
        );
        return new Set(rows.map((row) => row.event_id));
      } catch {
        return new Set<string>();
      }
    };
    try {
      for (let kill = 0; kill < 6; kill += 1) {
        const before = await storedEvents();
        const receiver = startCli(['run'], hooksEnv);
        await receiver.waitFor(/"msg":"webhook receiver listening"/);
        await killAfter(receiver, nextDelayMs(200, 900));
        const after = await storedEvents();
        for (const id of before) expect(after.has(id), id).toBe(true);
        await reading(hooksDb, expectDatabaseIntact);
      }
      await fetch(`${hooks.url}/_sim/stop-mutating/`, { method: 'POST' });
      const receiver = startCli(['run'], hooksEnv);
      await receiver.waitFor(/"msg":"webhook receiver listening"/);
      let pending = -1;
      for (let wait = 0; wait < 60 && pending !== 0; wait += 1) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        pending = await reading(hooksDb, (db) =>
          countRows(db, 'webhook_events', 'processed_at IS NULL'),
        );
      }
      receiver.child.kill('SIGTERM');
      expect((await receiver.exited).code).toBe(0);
      expect(pending).toBe(0);
      expect((await storedEvents()).size).toBeGreaterThan(10);
    } finally {
      hooks.child.kill('SIGTERM');
      await hooks.exited;
      await hooksDatabase.drop();
    }
  }, 60_000);
});
