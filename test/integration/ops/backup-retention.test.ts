import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { backupDatabase } from '../../../src/ops/backup.js';
import { sqliteOf } from '../../helpers/engine.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';
import { tempDir } from '../../helpers/records.js';

/*
 * Backups (VACUUM INTO a file): SQLite only. Retention, which both engines run, is in
 * retention.test.ts.
 */

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
        sqliteOf(mirror!.db)
          .prepare("SELECT count(*) AS n FROM sync_runs WHERE status = 'running'")
          .get() as { n: number }
      ).n;
    while (runs() === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The copy (VACUUM INTO) runs synchronously inside this call, before its first await.
    const backup = backupDatabase({ sourcePath: mirror.dbPath, targetPath: target });
    // Synchronously after the copy, before the cycle can write again: the source as copied.
    const source = dump(sqliteOf(mirror.db));
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
    const before = dump(sqliteOf(mirror.db));
    db = await openDatabase({ location: target }); // migrates: a no-op on an up-to-date copy
    expect(dump(sqliteOf(db))).toEqual(before);
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
