import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, serviceEnv, startSimulatorProcess, type RunningCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

let sim: RunningCli & { url: string };
beforeAll(async () => {
  sim = await startSimulatorProcess(['--requests', '60']);
});
afterAll(async () => {
  if (sim.child.exitCode === null) sim.child.kill('SIGKILL');
  await sim.exited;
});

const STATUS_KEYS = [
  'generated_at',
  'database_path',
  'database_bytes',
  'wal_bytes',
  'schema_version',
  'known_schema_version',
  'is_polling_on',
  'mode',
  'has_intake',
  'settings_source',
  'daemon_settings',
  'problems',
  'polling_retired_at',
  'last_success_at',
  'freshness_seconds',
  'poll_interval_seconds',
  'stale_after_seconds',
  'is_stale',
  'last_runs',
  'requests_total',
  'requests_by_state',
  'unavailable',
  'quarantined',
  'schema_drift',
  'webhook_events',
  'outbox',
  'intake_gaps',
  'webhook_silence',
  'cluster',
  'feed_sinks',
];

describe('transport-sync status', () => {
  it('after a sync: exits 0 with the documented JSON keys and the run', async () => {
    const db = join(tempDir(), 'mirror.db');
    const env = serviceEnv(sim.url, { TRANSPORT_DB: db });
    expect((await runCli(['sync'], env)).code).toBe(0);

    const result = await runCli(['status', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(Object.keys(report)).toEqual(STATUS_KEYS);
    expect(report).toMatchObject({
      database_path: db,
      is_stale: false,
      is_polling_on: true,
      poll_interval_seconds: 60,
      stale_after_seconds: 180,
      unavailable: 0,
      quarantined: 0,
      webhook_events: { received: 0, pending: 0, failed: 0 },
      outbox: { pending: 0, failed: 0 },
    });
    expect(report.freshness_seconds).toBeGreaterThanOrEqual(0);
    expect(report.freshness_seconds).toBeLessThan(60);
    expect(report.schema_version).toBe(report.known_schema_version);
    expect(report.database_bytes).toBeGreaterThan(0);
    // A one-shot sync is no daemon: none runs, none leads.
    expect(report.cluster).toEqual({ members: [], leader: null });

    const sqlite = new Database(db, { readonly: true });
    const byState = Object.fromEntries(
      (
        sqlite
          .prepare(
            'SELECT list_state AS s, count(*) AS n FROM requests WHERE unavailable_at IS NULL GROUP BY 1',
          )
          .all() as { s: string; n: number }[]
      ).map((row) => [row.s, row.n]),
    );
    const names = sqlite.prepare('SELECT patient_last_name AS name FROM requests').all() as {
      name: string;
    }[];
    sqlite.close();
    expect(report.requests_by_state).toEqual(byState);
    expect(report.requests_total).toBe(Object.values(byState).reduce((a, b) => a + Number(b), 0));
    expect(report.last_runs).toHaveLength(1);
    expect(report.last_runs[0]).toMatchObject({
      run_id: 1,
      kind: 'poll',
      status: 'ok',
      error: null,
      requests_new: report.requests_total,
    });
    expect(report.last_runs[0].duration_seconds).toBeGreaterThan(0);

    const text = await runCli(['status'], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^transport-sync status: fresh\n/);
    expect(text.stdout).toMatch(/#1 poll ok at /);
    // Neither secrets nor patient data, in either form.
    for (const output of [result.stdout, text.stdout]) {
      expect(output).not.toContain('demo-secret');
      for (const { name } of names.filter((row) => row.name && row.name.length > 3))
        expect(output).not.toContain(name);
    }
  });

  it('exits 1 when the last success is older than the stale threshold', async () => {
    const db = join(tempDir(), 'mirror.db');
    const env = serviceEnv(sim.url, { TRANSPORT_DB: db });
    expect((await runCli(['sync'], env)).code).toBe(0);
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const sqlite = new Database(db);
    sqlite.prepare("UPDATE sync_state SET value = ? WHERE key = 'last_success_at'").run(hourAgo);
    sqlite.close();

    const result = await runCli(['status', '--json'], env);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ last_success_at: hourAgo, is_stale: true });
    expect(report.freshness_seconds).toBeGreaterThanOrEqual(3600);
    // A wider threshold (hourly schedule) makes the same mirror fresh.
    const hourly = await runCli(['status', '--json'], {
      ...env,
      TRANSPORT_POLL_CRON: '0 * * * *',
    });
    expect(hourly.code).toBe(0);
    expect(JSON.parse(hourly.stdout)).toMatchObject({
      stale_after_seconds: 10_800,
      is_stale: false,
    });
    expect((await runCli(['status'], env)).stdout).toMatch(/^transport-sync status: STALE\n/);
  });

  it('exits 1 for a database never synced, and for no database at all without creating one', async () => {
    const db = join(tempDir(), 'mirror.db');
    const env = serviceEnv(sim.url, { TRANSPORT_DB: db });
    const missing = await runCli(['status'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`transport-sync: error: no database at ${db}`);
    expect(missing.stderr).toMatch(/hint: .*transport-sync migrate/);
    expect(existsSync(db)).toBe(false);

    expect((await runCli(['migrate'], env)).code).toBe(0);
    const never = await runCli(['status', '--json'], env);
    expect(never.code).toBe(1);
    expect(JSON.parse(never.stdout)).toMatchObject({
      last_success_at: null,
      freshness_seconds: null,
      is_stale: true,
      last_runs: [],
      requests_total: 0,
    });
    const text = await runCli(['status', '--db', db], serviceEnv(sim.url));
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('STALE: no poll cycle has succeeded yet');
  });

  it('refuses a bad --runs with exit 2', async () => {
    const result = await runCli(['status', '--runs', 'many'], serviceEnv(sim.url));
    expect(result.code).toBe(2);
  });
});
