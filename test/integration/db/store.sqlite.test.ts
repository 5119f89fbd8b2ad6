import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { openDatabase, schemaVersion, type MirrorDb } from '../../../src/db/open.js';
import { createStore, type Store } from '../../../src/db/store.js';
import { normalizeDetail } from '../../../src/sync/normalize.js';
import { sqliteOf } from '../../helpers/engine.js';
import { detailRecord, listFields, tempDir } from '../../helpers/records.js';

/* What only the SQLite file shows: its mode, WAL, pragmas, and that a refused file is untouched. */

let db: MirrorDb;
let store: Store;
let path: string;

beforeEach(async () => {
  path = join(tempDir(), 'mirror.db');
  db = await openDatabase({ location: path });
  store = createStore({ db, clock: systemClock });
});
afterEach(() => db.close());

function write(record = detailRecord(), list = listFields()) {
  return store.transaction((tx) =>
    tx.requests.write({
      normalized: normalizeDetail(record, list),
      rawJson: JSON.stringify(record),
      source: 'poll',
      observedAt: '2026-11-21T09:00:00.000Z',
    }),
  );
}

describe('the mirror database file', () => {
  it('is created private (0600) with WAL, foreign keys and every migration', async () => {
    expect(statSync(path).mode & 0o777).toBe(0o600);
    await write();
    expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    expect(sqliteOf(db).pragma('journal_mode', { simple: true })).toBe('wal');
    expect(sqliteOf(db).pragma('foreign_keys', { simple: true })).toBe(1);
    expect(await schemaVersion(db)).toBeGreaterThanOrEqual(2);
  });

  it('refuses a database from a newer schema and leaves it untouched', async () => {
    sqliteOf(db)
      .prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)')
      .run('future', 9_999_999_999_999);
    await db.close();
    const before = statSync(path).mtimeMs;
    await expect(openDatabase({ location: path })).rejects.toThrow(
      /newer than this transport-sync knows/,
    );
    expect(statSync(path).mtimeMs).toBe(before);
    await expect(
      openDatabase({ location: path, shouldMigrate: false, isReadOnly: true }),
    ).rejects.toThrow(/newer/);
    db = await openDatabase({ location: join(tempDir(), 'other.db') });
  });
});
