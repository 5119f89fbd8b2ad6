import { existsSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import {
  createCheckpointer,
  WAL_PAGES_BEFORE_THREAD,
  WAL_PAGES_BEFORE_WRITER_CHECKPOINTS,
} from '../../../src/db/sqlite/checkpointer.js';
import type { SqliteConnection } from '../../../src/db/sqlite/connection.js';
import { warnOfCheckpointFailures } from '../../../src/daemon/context.js';
import { createMetrics } from '../../../src/ops/metrics.js';
import { registerDbGauges } from '../../../src/ops/metrics-db.js';
import { captureLogger } from '../../helpers/api.js';
import { sqliteOf } from '../../helpers/engine.js';
import { sample } from '../../helpers/metrics.js';
import { tempDir } from '../../helpers/records.js';

/*
 * The WAL's checkpoints run on a thread of their own (src/db/sqlite/checkpointer.ts): what the
 * file shows of it. A page is 4 KiB; a megabyte of rows is about 260 pages of WAL.
 */

let db: MirrorDb | undefined;
afterEach(async () => {
  await db?.close();
  db = undefined;
});

const PAGE = 4096;
/** Enough megabytes to start the thread, and too few for the writer's own checkpoint. */
const STARTING_MB = Math.ceil((WAL_PAGES_BEFORE_THREAD * PAGE) / 2 ** 20) + 1;
const open = async (path: string) => {
  db = await openDatabase({ location: path });
  return db as SqliteConnection;
};

/** Writes `megabytes` of rows into a table of their own, one transaction per megabyte. */
async function writeMegabytes(conn: SqliteConnection, megabytes: number, from = 0) {
  await conn.transaction((sql) => sql.run('CREATE TABLE IF NOT EXISTS ballast (n, body)'));
  const body = 'x'.repeat(PAGE - 200);
  for (let mb = from; mb < from + megabytes; mb += 1) {
    await conn.transaction(async (sql) => {
      for (let i = 0; i < 256; i += 1)
        await sql.run('INSERT INTO ballast (n, body) VALUES (@n, @body)', {
          n: mb * 256 + i,
          body,
        });
    });
  }
}

describe('the checkpoint thread', () => {
  it('copies the WAL into the file while the writer goes on, long before the writer would', async () => {
    const path = join(tempDir(), 'mirror.db');
    const conn = await open(path);
    expect(sqliteOf(conn).pragma('wal_autocheckpoint', { simple: true })).toBe(
      WAL_PAGES_BEFORE_WRITER_CHECKPOINTS,
    );
    await writeMegabytes(conn, STARTING_MB);
    await conn.checkpoints!.settled();

    expect(conn.checkpoints!.isRunning).toBe(true);
    expect(conn.checkpoints!.completed).toBeGreaterThan(0);
    expect(conn.checkpoints!.lastError).toBeUndefined();
    // Fewer pages than the writer's own checkpoint wants: only the thread can have put the rows
    // into the database file (at least those of the WAL that started it).
    expect(statSync(path).size).toBeGreaterThan((WAL_PAGES_BEFORE_THREAD * PAGE) / 2);
  });

  it('is not started by a command that writes little', async () => {
    const conn = await open(join(tempDir(), 'mirror.db'));
    await writeMegabytes(conn, 1);
    expect(conn.checkpoints!.isRunning).toBe(false);
    expect(conn.checkpoints!.completed).toBe(0);
  });

  it('stops on close, and the last close leaves every row in the file and no WAL', async () => {
    const path = join(tempDir(), 'mirror.db');
    const conn = await open(path);
    await writeMegabytes(conn, STARTING_MB);
    expect(conn.checkpoints!.isRunning).toBe(true);
    await conn.close();
    db = undefined;
    expect(existsSync(`${path}-wal`)).toBe(false);

    const again = await open(path);
    const { n } = sqliteOf(again).prepare('SELECT count(*) AS n FROM ballast').get() as {
      n: number;
    };
    expect(n).toBe(STARTING_MB * 256);
  });

  it('starts at most one checkpoint per interval, however often the writer commits', async () => {
    const path = join(tempDir(), 'mirror.db');
    const conn = await open(path);
    await writeMegabytes(conn, STARTING_MB);
    let clock = 1_000;
    const checkpointer = createCheckpointer(path, PAGE, { now: () => clock, intervalMs: 200 });
    const commitAt = async (ms: number) => {
      clock = ms;
      checkpointer.afterCommit();
      await checkpointer.settled();
    };
    await commitAt(1_000);
    await commitAt(1_050);
    await commitAt(1_199);
    expect(checkpointer.completed).toBe(1);
    await commitAt(1_200);
    expect(checkpointer.completed).toBe(2);
    await checkpointer.close();
  });

  it('leaves the writer to checkpoint on its own when the thread cannot open the file', async () => {
    const path = join(tempDir(), 'gone.db');
    // A WAL past the thread's start, beside a database file that is not there.
    writeFileSync(`${path}-wal`, Buffer.alloc(WAL_PAGES_BEFORE_THREAD * PAGE));
    const checkpointer = createCheckpointer(path, PAGE);
    const heard: Error[] = [];
    checkpointer.onFailure((error) => heard.push(error));
    checkpointer.afterCommit();
    expect(checkpointer.isRunning).toBe(true);
    expect(checkpointer.hasStopped).toBe(false);
    // The checkpoint asked for ends with the thread's failure.
    await checkpointer.settled();
    expect(checkpointer.isRunning).toBe(false);
    expect(checkpointer.lastError?.message).toMatch(/unable to open|does not exist|no such file/i);
    // Told as it happened, and kept for metrics: the thread is gone for good.
    expect(heard).toEqual([checkpointer.lastError]);
    expect(checkpointer.failures).toBe(1);
    expect(checkpointer.hasStopped).toBe(true);
    checkpointer.afterCommit();
    expect(checkpointer.isRunning).toBe(false);
    await checkpointer.close();
  });
});

describe('the checkpoint thread, as an operator sees it', () => {
  const scrape = (conn: SqliteConnection) => {
    const metrics = createMetrics({ isDefaultMetricsOn: false });
    registerDbGauges({ registry: metrics.registry, db: conn });
    return async () => {
      const text = await metrics.registry.metrics();
      return {
        checkpoints: sample(text, 'transport_sync_sqlite_checkpoints_total'),
        failures: sample(text, 'transport_sync_sqlite_checkpoint_failures_total'),
        stopped: sample(text, 'transport_sync_sqlite_checkpoint_thread_stopped'),
      };
    };
  };

  it("counts the thread's checkpoints in the daemon's metrics", async () => {
    const conn = await open(join(tempDir(), 'mirror.db'));
    const read = scrape(conn);
    expect(await read()).toEqual({ checkpoints: 0, failures: 0, stopped: 0 });
    await writeMegabytes(conn, STARTING_MB);
    await conn.checkpoints!.settled();
    expect(conn.checkpoints!.completed).toBeGreaterThan(0);
    expect(await read()).toEqual({
      checkpoints: conn.checkpoints!.completed,
      failures: 0,
      stopped: 0,
    });
  });

  it('warns once, and shows the thread stopped, when the file is moved away under the writer', async () => {
    const dir = tempDir();
    const path = join(dir, 'mirror.db');
    const conn = await open(path);
    const { log, lines } = captureLogger();
    warnOfCheckpointFailures(conn.checkpoints!, log);
    const read = scrape(conn);
    // The writer keeps the file it opened; the thread, opening it by name, finds none.
    renameSync(path, join(dir, 'moved.db'));
    await writeMegabytes(conn, STARTING_MB);
    await conn.checkpoints!.settled();
    await writeMegabytes(conn, 1, STARTING_MB);

    expect(await read()).toEqual({ checkpoints: 0, failures: 1, stopped: 1 });
    const warnings = lines
      .map((line) => JSON.parse(line) as { level: number; area?: string; msg: string })
      .filter((line) => line.area === 'db');
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 40,
        msg: "the WAL's checkpoint thread stopped; the writer checkpoints from now on",
        err: expect.objectContaining({ message: expect.stringMatching(/unable to open/i) }),
      }),
    ]);
    // The writer went on alone: every row is there.
    const rows = await conn.read((sql) =>
      sql.get<{ n: number }>('SELECT count(*) AS n FROM ballast'),
    );
    expect(rows?.n).toBe((STARTING_MB + 1) * 256);
  });
});
