import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  processTracker,
} from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

function rows(path: string, sql: string): unknown[] {
  const sqlite = new Database(path, { readonly: true });
  try {
    return sqlite.prepare(sql).all();
  } finally {
    sqlite.close();
  }
}

describe('transport-sync backup', () => {
  it('copies the database while a sync writes it, consistently, mode 0600, never overwriting', async () => {
    // Latency stretches the sync so the backup lands in the middle of it.
    const sim = await startSimulatorProcess(['--requests', '200', '--latency', '150']);
    processes.track(sim);
    const dir = tempDir();
    const db = join(dir, 'mirror.db');
    const env = serviceEnv(sim.url, { TRANSPORT_DB: db, TRANSPORT_CONCURRENCY: '2' });
    expect((await runCli(['migrate'], env)).code).toBe(0);
    const sync = startCli(['sync'], env);
    processes.track(sync);
    const isRunning = () =>
      (rows(db, "SELECT count(*) AS n FROM sync_runs WHERE status = 'running'")[0] as { n: number })
        .n > 0;
    while (!isRunning()) await new Promise((resolve) => setTimeout(resolve, 20));

    const target = join(dir, 'backup.db');
    const backup = await runCli(['backup', target], env);
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toMatch(
      /^backup written: .*backup\.db \(\d+ bytes, schema version \d+, integrity ok\)\n$/,
    );
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect((await sync.exited).code).toBe(0);

    // Taken mid-sync: the run is still open in the copy, and the copy is whole.
    expect(rows(target, 'PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
    expect(rows(target, 'SELECT status FROM sync_runs')).toEqual([{ status: 'running' }]);
    const copied = rows(target, 'SELECT request_id FROM requests ORDER BY request_id');
    const final = rows(db, 'SELECT request_id FROM requests ORDER BY request_id');
    expect(copied.length).toBeLessThanOrEqual(final.length);

    const again = await runCli(['backup', target], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists; not overwritten\n {2}hint: .*--force/);

    // Now idle: a forced backup equals the database, table by table.
    expect((await runCli(['backup', '--force', target], env)).code).toBe(0);
    for (const table of [
      'requests',
      'request_locations',
      'request_changes',
      'sync_runs',
      'sync_state',
    ])
      expect(rows(target, `SELECT * FROM ${table} ORDER BY rowid`), table).toEqual(
        rows(db, `SELECT * FROM ${table} ORDER BY rowid`),
      );
  });

  it('needs exactly one file name, and an existing database', async () => {
    const dir = tempDir();
    const env = serviceEnv('http://127.0.0.1:9', { TRANSPORT_DB: join(dir, 'none.db') });
    expect((await runCli(['backup'], env)).code).toBe(2);
    const missing = await runCli(['backup', join(dir, 'b.db')], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no database at');
  });
});

describe('transport-sync prune', () => {
  it('deletes the history past --days and reports the counts', async () => {
    const dir = tempDir();
    const db = join(dir, 'mirror.db');
    const env = serviceEnv('http://127.0.0.1:9', { TRANSPORT_DB: db });
    expect((await runCli(['migrate'], env)).code).toBe(0);
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
    const recent = new Date(Date.now() - 86_400_000).toISOString();
    const sqlite = new Database(db);
    const run = sqlite.prepare(
      "INSERT INTO sync_runs (kind, started_at, finished_at, status) VALUES ('poll', ?, ?, 'ok')",
    );
    run.run(old, old);
    run.run(recent, recent);
    sqlite.close();

    const kept = await runCli(['prune'], env); // default 180 days
    expect(kept.code).toBe(0);
    expect(kept.stdout).toMatch(/: 0 sync runs, 0 webhook events, 0 request changes\n$/);
    const pruned = await runCli(['prune', '--days', '30'], env);
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toMatch(
      /^pruned before \S+: 1 sync runs, 0 webhook events, 0 request changes\n$/,
    );
    expect(rows(db, 'SELECT finished_at FROM sync_runs')).toEqual([{ finished_at: recent }]);
  });

  it('refuses a database that is not migrated', async () => {
    const db = join(tempDir(), 'old.db');
    new Database(db).close();
    const result = await runCli(['prune'], serviceEnv('http://127.0.0.1:9', { TRANSPORT_DB: db }));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /schema version 0; this version needs \d+\n {2}hint: Run `transport-sync migrate`/,
    );
  });
});
