import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { backupDatabase } from '../../../src/ops/backup.js';
import { pruneHistory } from '../../../src/ops/retention.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';
import { tempDir } from '../../helpers/records.js';

let mirror: MirrorFixture | undefined;
let db: MirrorDb | undefined;
afterEach(async () => {
  await mirror?.close();
  mirror = undefined;
  await db?.close();
  db = undefined;
});

/** Every user table's rows, in a stable order: two databases are equal when these are. */
function dump(sqlite: Database.Database): Record<string, unknown[]> {
  const tables = sqlite
    .prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all() as { name: string }[];
  return Object.fromEntries(
    tables.map(({ name }) => [
      name,
      sqlite.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all(),
    ]),
  );
}

describe('backup', () => {
  it('taken in the middle of a sync, opens to a database equal to the source at that moment', async () => {
    mirror = await startMirror({ requests: 150, latencyMs: 5 });
    await mirror.cycle();
    mirror.clock.advance(60_000);
    mirror.sim.mutate(40);
    const target = join(tempDir(), 'backup.db');
    const cycle = mirror.cycle();
    // Wait until the second cycle has written some of its rows, then copy while it runs.
    const runs = () =>
      (
        mirror!.db.sqlite
          .prepare("SELECT count(*) AS n FROM sync_runs WHERE status = 'running'")
          .get() as { n: number }
      ).n;
    while (runs() === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The copy (VACUUM INTO) runs synchronously inside this call, before its first await.
    const backup = backupDatabase({ sourcePath: mirror.dbPath, targetPath: target });
    // Synchronously after the copy, before the cycle can write again: the source as copied.
    const source = dump(mirror.db.sqlite);
    const result = await backup;
    await cycle;

    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(result.schemaVersion).toBeGreaterThan(0);
    const copy = new Database(target, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      const copied = dump(copy);
      expect(Object.keys(copied)).toEqual(Object.keys(source));
      for (const table of Object.keys(source)) expect(copied[table], table).toEqual(source[table]);
      expect((copied.sync_runs as { status: string }[]).at(-1)?.status).toBe('running');
    } finally {
      copy.close();
    }
  });

  it('is restorable by copying it back: the daemon opens it as its own database', async () => {
    mirror = await startMirror({ requests: 60 });
    await mirror.cycle();
    const target = join(tempDir(), 'backup.db');
    await backupDatabase({ sourcePath: mirror.dbPath, targetPath: target });
    const before = dump(mirror.db.sqlite);
    db = await openDatabase({ path: target }); // migrates: a no-op on an up-to-date copy
    expect(dump(db.sqlite)).toEqual(before);
  });

  it('refuses to overwrite a file unless forced, and leaves no temporary file behind', async () => {
    mirror = await startMirror({ requests: 20 });
    await mirror.cycle();
    const dir = tempDir();
    const target = join(dir, 'backup.db');
    writeFileSync(target, 'precious');
    await expect(backupDatabase({ sourcePath: mirror.dbPath, targetPath: target })).rejects.toThrow(
      expect.objectContaining({ code: 'backup.exists' }),
    );
    await backupDatabase({ sourcePath: mirror.dbPath, targetPath: target, force: true });
    const copy = new Database(target, { readonly: true });
    expect(copy.pragma('quick_check', { simple: true })).toBe('ok');
    copy.close();
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(existsSync(join(dir, `.backup.db.${process.pid}.tmp`))).toBe(false);
    await expect(
      backupDatabase({ sourcePath: mirror.dbPath, targetPath: mirror.dbPath }),
    ).rejects.toThrow(expect.objectContaining({ code: 'backup.same_file' }));
  });
});

describe('retention', () => {
  const DAY = 86_400_000;
  const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);
  const at = (daysAgo: number, extraMs = 0) =>
    new Date(NOW - daysAgo * DAY + extraMs).toISOString();

  function seed(sqlite: Database.Database) {
    const run = sqlite.prepare(
      "INSERT INTO sync_runs (kind, started_at, finished_at, status) VALUES ('poll', ?, ?, ?)",
    );
    run.run(at(40), at(40), 'ok'); // old: pruned
    run.run(at(31), at(30, -1), 'failed'); // finished just before the cutoff: pruned
    run.run(at(30), at(30), 'ok'); // exactly at the cutoff: kept
    run.run(at(45), null, 'running'); // never finished: kept
    run.run(at(1), at(1), 'ok');
    const event = sqlite.prepare(
      "INSERT INTO webhook_events (event_id, envelope, payload_json, received_at, processed_at) VALUES (?, 'v2', '{}', ?, ?)",
    );
    event.run('e1', at(50), at(50)); // old, processed: pruned
    event.run('e2', at(50), null); // old, never applied: kept
    event.run('e3', at(2), at(2));
    const change = sqlite.prepare(
      "INSERT INTO request_changes (request_id, observed_at, kind, source, changed_columns) VALUES ('R1', ?, 'updated', 'poll', 'x')",
    );
    change.run(at(90));
    change.run(at(31));
    change.run(at(29));
  }

  it('deletes exactly the finished runs, processed events and changes older than the retention', async () => {
    db = await openDatabase({ path: join(tempDir(), 'mirror.db') });
    seed(db.sqlite);
    const counts = await pruneHistory({ db, retentionDays: 30, now: NOW });
    expect(counts).toEqual({ syncRuns: 2, webhookEvents: 1, requestChanges: 2 });
    const left = (sql: string) => db!.sqlite.prepare(sql).all();
    expect(left('SELECT status, finished_at FROM sync_runs ORDER BY run_id')).toEqual([
      { status: 'ok', finished_at: at(30) },
      { status: 'running', finished_at: null },
      { status: 'ok', finished_at: at(1) },
    ]);
    expect(left('SELECT event_id FROM webhook_events ORDER BY event_id')).toEqual([
      { event_id: 'e2' },
      { event_id: 'e3' },
    ]);
    expect(left('SELECT observed_at FROM request_changes')).toEqual([{ observed_at: at(29) }]);
    // Nothing is left to prune a second time.
    expect(await pruneHistory({ db, retentionDays: 30, now: NOW })).toEqual({
      syncRuns: 0,
      webhookEvents: 0,
      requestChanges: 0,
    });
  });

  it('keeps everything at 0 days, and prunes in batches past 5000 rows', async () => {
    db = await openDatabase({ path: join(tempDir(), 'mirror.db') });
    seed(db.sqlite);
    expect(await pruneHistory({ db, retentionDays: 0, now: NOW })).toEqual({
      syncRuns: 0,
      webhookEvents: 0,
      requestChanges: 0,
    });
    const change = db.sqlite.prepare(
      "INSERT INTO request_changes (request_id, observed_at, kind, source, changed_columns) VALUES ('R2', ?, 'updated', 'poll', 'x')",
    );
    db.sqlite.transaction(() => {
      for (let i = 0; i < 12_345; i += 1) change.run(at(100));
    })();
    const counts = await pruneHistory({ db, retentionDays: 30, now: NOW });
    expect(counts.requestChanges).toBe(12_345 + 2);
  });
});
