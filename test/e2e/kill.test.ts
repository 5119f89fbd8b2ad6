import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  type RunningCli,
} from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

/*
 * SIGKILL at random points of sync, backfill and the daemon, each followed by a restart. After
 * every kill the database passes integrity_check and keeps every row committed before it; at the
 * end one clean cycle makes it equal the simulator's truth.
 */

const DAY = 86_400_000;
let sim: RunningCli & { url: string };
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
  dbPath = join(tempDir(), 'killed.db');
  env = serviceEnv(sim.url, {
    TRANSPORT_DB: dbPath,
    TRANSPORT_POLL_CRON: '* * * * * *',
    TRANSPORT_CONCURRENCY: '8',
  });
});
afterAll(async () => {
  sim.child.kill('SIGTERM');
  await sim.exited;
});

function snapshot(): Map<string, string | null> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare('SELECT request_id, last_updated_timestamp_utc AS at FROM requests')
      .all() as { request_id: string; at: string | null }[];
    return new Map(rows.map((row) => [row.request_id, row.at]));
  } finally {
    db.close();
  }
}

function expectIntactAfterKill(before: Map<string, string | null>): void {
  const db = new Database(dbPath, { readonly: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('foreign_key_check')).toEqual([]);
  } finally {
    db.close();
  }
  const after = snapshot();
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
        const before = snapshot();
        const process = startCli(kind.args, env);
        await killAfter(process, nextDelayMs(kind.min, kind.max));
        expectIntactAfterKill(before);
        kills += 1;
      }
    }
    expect(kills).toBe(24);

    // The backfill resumes from its checkpoints and finishes; one clean cycle brings the rest.
    const backfill = await runCli(backfillArgs, env);
    expect(backfill.code, backfill.stderr).toBe(0);
    await fetch(`${sim.url}/_sim/faults/`, {
      method: 'POST',
      body: JSON.stringify({}),
      headers: { 'content-type': 'application/json' },
    });
    // One cycle at start, no more; a short deadline lets it close the runs the kills left open.
    const daemon = startCli(['run'], {
      ...env,
      TRANSPORT_POLL_CRON: '0 0 1 1 *',
      TRANSPORT_CYCLE_DEADLINE_MS: '5000',
    });
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    await daemon.waitFor(/"msg":"poll cycle finished"/);
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
    const db = new Database(dbPath, { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const runs = db
      .prepare("SELECT count(*) AS n FROM sync_runs WHERE status = 'running' AND kind = 'poll'")
      .get() as { n: number };
    db.close();
    expect(runs.n).toBe(0);
  }, 120_000);
});
