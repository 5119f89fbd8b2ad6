import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  type RunningCli,
  freePort,
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
    const db = new Database(dbPath, { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const runs = db
      .prepare("SELECT count(*) AS n FROM sync_runs WHERE status = 'running'")
      .get() as { n: number };
    db.close();
    expect(runs.n).toBe(0);
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
    const mirror = new Database(dbPath, { readonly: true });
    const select = mirror.prepare(
      'SELECT list_state, last_updated_timestamp_utc, unavailable_at FROM requests WHERE request_id = ?',
    );
    const actual = expected.map(([id]) => {
      const row = select.get(id) as
        | { list_state: string; last_updated_timestamp_utc: string; unavailable_at: string | null }
        | undefined;
      return [id, row?.list_state, row?.last_updated_timestamp_utc];
    });
    mirror.close();
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
    const hooksDb = join(dir, 'hooks.db');
    const hooksEnv = serviceEnv(hooks.url, {
      TRANSPORT_DB: hooksDb,
      TRANSPORT_POLL: 'off',
      TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
      TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: keyFile,
    });
    const storedEvents = () => {
      try {
        const db = new Database(hooksDb, { readonly: true, fileMustExist: true });
        try {
          return new Set(
            (db.prepare('SELECT event_id FROM webhook_events').all() as { event_id: string }[]).map(
              (row) => row.event_id,
            ),
          );
        } finally {
          db.close();
        }
      } catch {
        return new Set<string>();
      }
    };
    try {
      for (let kill = 0; kill < 6; kill += 1) {
        const before = storedEvents();
        const receiver = startCli(['run'], hooksEnv);
        await receiver.waitFor(/"msg":"webhook receiver listening"/);
        await killAfter(receiver, nextDelayMs(200, 900));
        const after = storedEvents();
        for (const id of before) expect(after.has(id), id).toBe(true);
        const db = new Database(hooksDb, { readonly: true });
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        db.close();
      }
      await fetch(`${hooks.url}/_sim/stop-mutating/`, { method: 'POST' });
      const receiver = startCli(['run'], hooksEnv);
      await receiver.waitFor(/"msg":"webhook receiver listening"/);
      let pending = -1;
      for (let wait = 0; wait < 60 && pending !== 0; wait += 1) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const db = new Database(hooksDb, { readonly: true });
        pending = (
          db
            .prepare('SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NULL')
            .get() as { n: number }
        ).n;
        db.close();
      }
      receiver.child.kill('SIGTERM');
      expect((await receiver.exited).code).toBe(0);
      expect(pending).toBe(0);
      expect(storedEvents().size).toBeGreaterThan(10);
    } finally {
      hooks.child.kill('SIGTERM');
      await hooks.exited;
    }
  }, 60_000);
});
