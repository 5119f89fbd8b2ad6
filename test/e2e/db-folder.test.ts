import { existsSync, statSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { knownMigrations } from '../../src/db/migrations.js';
import { afterEach, describe, expect, it } from 'vitest';
import { processTracker, runCli, serviceEnv, startSimulatorProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

/*
 * A mistyped TRANSPORT_DB must not start a second, empty mirror: only migrate (and the demo, for
 * its own ./data) creates the database's folder. Nothing here needs the service: the database is
 * opened before any call, and an unreachable address proves none is made.
 */
const NOWHERE = 'http://127.0.0.1:9';
const processes = processTracker();
afterEach(() => processes.stopAll());

describe('a database path whose folder does not exist', () => {
  it.each([['sync'], ['run'], ['backfill', '--from', '2026-11-01', '--to', '2026-11-02']])(
    '%s refuses it with exit 2 and a hint, creating nothing',
    async (...args) => {
      const folder = join(tempDir(), 'transprot-sync');
      const result = await runCli(
        args,
        serviceEnv(NOWHERE, { TRANSPORT_DB: join(folder, 'm.db') }),
      );
      expect(result.code, result.stderr).toBe(2);
      const lines = result.stderr.trim().split('\n');
      const at = lines.findIndex((line) => line.startsWith('transport-sync: error:'));
      const [message, hint] = lines.slice(at);
      expect(message).toBe(
        `transport-sync: error: the folder ${folder} of the database ${join(folder, 'm.db')} does not exist`,
      );
      expect(hint).toMatch(/^\s*hint: Check TRANSPORT_DB .*transport-sync migrate/);
      expect(existsSync(folder)).toBe(false);
    },
  );

  it('migrate creates it, private to the user, and then the others use it', async () => {
    const folder = join(tempDir(), 'state', 'transport-sync');
    const env = serviceEnv(NOWHERE, { TRANSPORT_DB: join(folder, 'm.db') });
    const migrated = await runCli(['migrate'], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(join(folder, 'm.db')).mode & 0o777).toBe(0o600);
    // The folder exists now: status reads the new, empty mirror instead of refusing it.
    const status = await runCli(['status', '--json'], env);
    expect(status.code, status.stderr).not.toBe(2);
    expect(JSON.parse(status.stdout)).toMatchObject({
      database_path: join(folder, 'm.db'),
      // Every migration this version knows: migrate applied them all.
      schema_version: knownMigrations('sqlite').length,
    });
  });

  it('a new file inside an existing folder is still created (systemd StateDirectory)', async () => {
    const sim = await startSimulatorProcess(['--requests', '5']);
    processes.track(sim);
    const path = join(tempDir(), 'fresh.db');
    const result = await runCli(['sync'], serviceEnv(sim.url, { TRANSPORT_DB: path }));
    expect(result.code, result.stderr).toBe(0);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});

describe("the mirror's pages outside its folder", () => {
  it('a sync leaves no temporary file in the temporary folder: SQLite keeps its journals of savepoints in memory', async () => {
    // SQLite spills a statement or savepoint journal above 64 KiB to a file of its temporary
    // folder (SQLITE_TMPDIR, else TMPDIR, else /var/tmp), named etilqs_*, unlinked at once: page
    // images of the mirror, patient data, in a folder other users share.
    const sim = await startSimulatorProcess(['--requests', '300']);
    processes.track(sim);
    const tmp = tempDir();
    const created: string[] = [];
    const sentinel = 'written-after-the-sync';
    let sawSentinel!: () => void;
    const sentinelSeen = new Promise<void>((resolve) => (sawSentinel = resolve));
    const watcher = watch(tmp, (_event, name) => {
      if (name === sentinel) sawSentinel();
      else if (name) created.push(name);
    });
    try {
      const result = await runCli(
        ['sync'],
        serviceEnv(sim.url, {
          TRANSPORT_DB: join(tempDir(), 'mirror.db'),
          TMPDIR: tmp,
          SQLITE_TMPDIR: tmp,
          NODE_DISABLE_COMPILE_CACHE: '1',
        }),
      );
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/sync ok: \d+ seen, [1-9]\d+ new/);
      // The watcher reports in order: once it reports this file, it has reported the sync's.
      writeFileSync(join(tmp, sentinel), '');
      await sentinelSeen;
    } finally {
      watcher.close();
    }
    expect(created.filter((name) => name.startsWith('etilqs_'))).toEqual([]);
  });
});
