import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { TABLES } from '../../src/db/schema/index.js';
import {
  cleanEnv,
  processTracker,
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
} from '../helpers/cli.js';
import { createTestDatabase, queryAll, testEngine, type TestDatabase } from '../helpers/engine.js';
import { tempDir } from '../helpers/records.js';

/*
 * `transport-sync copy --to postgres://...` as an operator moving up runs it: a SQLite mirror
 * filled by a real backfill, with outbox rows in several delivery states, copied into an empty
 * PostgreSQL database by the CLI; killed halfway, run again, it resumes and checks out equal.
 * Runs in the postgres project only (its name says so).
 */

const processes = processTracker();
let database: TestDatabase | undefined;
afterEach(async () => {
  await processes.stopAll();
  await database?.drop();
  database = undefined;
});

const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A SQLite mirror of `requests` requests, with the outbox in each delivery state. */
async function filledMirror(requests: number): Promise<string> {
  const sim = await startSimulatorProcess(['--requests', String(requests)]);
  processes.track(sim);
  const file = join(tempDir(), 'mirror.db');
  // Windows of a week: every table filled, backfill_windows included, in a seventh of the list
  // calls of windows of a day (about 15 a window, whatever it holds).
  const backfill = await runCli(
    [
      'backfill',
      '--from',
      day(Date.now() - 31 * DAY),
      '--to',
      day(Date.now() + 15 * DAY),
      '--chunk-hours',
      '168',
    ],
    serviceEnv(sim.url, { TRANSPORT_DB: file }),
  );
  expect(backfill.code, backfill.stderr).toBe(0);
  const sqlite = new Database(file);
  const ids = (
    sqlite.prepare('SELECT request_id FROM requests LIMIT 3').all() as {
      request_id: string;
    }[]
  ).map((row) => row.request_id);
  const action = sqlite.prepare(
    "INSERT INTO outbox_actions (request_id, kind, notes) VALUES (?, 'accept', 'ETA 20 min')",
  );
  for (const id of ids) action.run(id);
  sqlite
    .prepare(
      'INSERT INTO outbox_locations (request_id, lat, lng, alt, speed, timestamp) VALUES (?, 41.8781, -87.6298, 181, 12.5, 1750000000.25)',
    )
    .run(ids[0]);
  // One delivered, one failed: the copy carries their state, not only the pending rows.
  sqlite.prepare("UPDATE outbox_actions SET status = 'sent' WHERE request_id = ?").run(ids[1]);
  sqlite
    .prepare(
      "UPDATE outbox_actions SET status = 'failed', last_error = 'HTTP 403' WHERE request_id = ?",
    )
    .run(ids[2]);
  sqlite.close();
  return file;
}

/** Rows per table of the SQLite file. */
function sqliteCounts(file: string): Record<string, number> {
  const sqlite = new Database(file, { readonly: true });
  try {
    return Object.fromEntries(
      TABLES.map((table) => [
        table.name,
        (sqlite.prepare(`SELECT count(*) AS n FROM ${table.name}`).get() as { n: number }).n,
      ]),
    );
  } finally {
    sqlite.close();
  }
}

describe('copy --to postgres://', () => {
  it('copies a backfilled SQLite mirror equal, and resumes after a kill halfway', async () => {
    expect(testEngine()).toBe('postgres');
    const file = await filledMirror(800);
    database = await createTestDatabase();
    const env = cleanEnv({ TRANSPORT_DB: file });

    // Killed once the first table is done: the later ones are still being copied.
    const first = startCli(['copy', '--to', database.location], env);
    processes.track(first);
    let progress = '';
    await new Promise<void>((resolve, reject) => {
      first.child.stderr.on('data', (chunk: Buffer) => {
        progress += chunk.toString();
        if (/^ {2}requests: (\d+) of \1$/m.test(progress)) {
          first.child.kill('SIGKILL');
          resolve();
        }
      });
      first.child.on('close', () => reject(new Error(`copy ended before the kill: ${progress}`)));
    });
    const killed = await first.exited;
    expect(killed.signal).toBe('SIGKILL');
    const pg = await openDatabase({ location: database.location, shouldMigrate: false });
    try {
      // What the first run committed stays, with its checkpoints to resume from.
      const checkpoints = await pg.read((sql) =>
        sql.all<{ key: string }>("SELECT key FROM sync_state WHERE key LIKE 'copy:%'"),
      );
      expect(checkpoints.map((row) => row.key)).toContain('copy:requests');
      // ...and what it had not reached is still to copy: the second run has work to resume.
      const [fields] = await queryAll<{ n: number }>(
        pg,
        'SELECT count(*) AS n FROM request_fields',
      );
      expect(Number(fields!.n)).toBeLessThan(sqliteCounts(file).request_fields!);
    } finally {
      await pg.close();
    }

    const second = await runCli(['copy', '--to', database.location], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('copy complete: every table equal');
    expect(second.stdout).not.toContain('DIFFERENT');

    const counts = sqliteCounts(file);
    expect(counts.requests).toBeGreaterThan(500);
    const copied = await openDatabase({ location: database.location, shouldMigrate: false });
    try {
      for (const table of TABLES) {
        const [row] = await queryAll<{ n: number | string }>(
          copied,
          `SELECT count(*) AS n FROM ${table.name}`,
        );
        // sync_state: the copy's own checkpoints are gone once every table is equal.
        expect([table.name, Number(row!.n)]).toEqual([table.name, counts[table.name]]);
      }
      expect(
        await queryAll(
          copied,
          'SELECT status, count(*) AS n FROM outbox_actions GROUP BY status ORDER BY status',
        ),
      ).toEqual([
        { status: 'failed', n: 1 },
        { status: 'pending', n: 1 },
        { status: 'sent', n: 1 },
      ]);
    } finally {
      await copied.close();
    }
    // A backfill and two copies as processes: about 10 s alone, three times that beside the
    // rest of the suite on a 2-core machine.
  }, 120_000);

  it('refuses a target that already holds another mirror, and writes nothing to it', async () => {
    expect(testEngine()).toBe('postgres');
    // Two mirrors of their own, filled side by side.
    const [file, other] = await Promise.all([filledMirror(100), filledMirror(100)]);
    database = await createTestDatabase();
    const env = cleanEnv({ TRANSPORT_DB: file });
    expect((await runCli(['copy', '--to', database.location], env)).code).toBe(0);
    const again = await runCli(
      ['copy', '--to', database.location],
      cleanEnv({ TRANSPORT_DB: other }),
    );
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already holds a mirror/);
    const target = await openDatabase({ location: database.location, shouldMigrate: false });
    try {
      const [row] = await queryAll<{ n: number }>(target, 'SELECT count(*) AS n FROM requests');
      expect(Number(row!.n)).toBe(sqliteCounts(file).requests);
    } finally {
      await target.close();
    }
  }, 120_000);

  it("reports the copy's own refusals and a database's failure as errors with a hint, exit 1", async () => {
    expect(testEngine()).toBe('postgres');
    // A mirror whose daemon renewed its lease a moment ago.
    const file = join(tempDir(), 'mirror.db');
    const mirror = await openDatabase({ location: file });
    await mirror.transaction((sql) =>
      sql.run("INSERT INTO sync_state (key, value, updated_at) VALUES ('daemon_owner', 'x', @at)", {
        at: new Date().toISOString(),
      }),
    );
    await mirror.close();
    database = await createTestDatabase();
    const env = cleanEnv({ TRANSPORT_DB: file });

    const busy = await runCli(['copy', '--to', database.location], env);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(/^transport-sync: error: a daemon is running on .*mirror\.db/m);
    expect(busy.stderr).toMatch(/^ {2}hint: Stop it first/m);
    expect(busy.stderr).not.toContain('copying');
    // Refused before the target was opened: not even migrated.
    const target = await openDatabase({ location: database.location, shouldMigrate: false });
    try {
      expect(await target.hasTable('sync_state')).toBe(false);
    } finally {
      await target.close();
    }

    // The lease let go: a target database that does not exist is the server's error, named.
    const released = new Database(file);
    released.prepare("DELETE FROM sync_state WHERE key = 'daemon_owner'").run();
    released.close();
    const missing = new URL(database.location);
    missing.pathname = `${missing.pathname}_missing`;
    const gone = await runCli(['copy', '--to', missing.toString()], env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^transport-sync: error: .*does not exist/m);
    expect(gone.stderr).toMatch(/^ {2}hint: /m);
    expect(gone.stderr).not.toContain('unexpected');
  }, 60_000);
});
