import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { openDatabase, schemaVersion, type MirrorDb } from '../../../src/db/open.js';
import { createStore, type Store } from '../../../src/db/store.js';
import { SQLITE_DIALECT } from '../../../src/db/sqlite/connection.js';
import { requestSql } from '../../../src/db/store/request-sql.js';
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

  it("answers a poll cycle's window summaries from an index alone, not from the rows", () => {
    // From the table, each row's read_at lies past raw_json's overflow pages.
    const plan = sqliteOf(db)
      .prepare(`EXPLAIN QUERY PLAN ${requestSql(SQLITE_DIALECT).summariesInWindow}`)
      .all({ from: '2026-01-01T00:00:00.000Z', to: '2026-02-01T00:00:00.000Z' }) as {
      detail: string;
    }[];
    // The held digest's quarantine check is the one other step, by its own index.
    expect(plan.map((step) => step.detail)).toEqual([
      expect.stringContaining('USING COVERING INDEX requests_summary_idx'),
      expect.stringContaining('CORRELATED SCALAR SUBQUERY'),
      expect.stringMatching(/USING (COVERING )?INDEX quarantine_request_idx/),
    ]);
  });

  it("finds a request's quarantined records by index, as each record stored clears them", () => {
    const planOf = (text: string) =>
      (
        sqliteOf(db).prepare(`EXPLAIN QUERY PLAN ${text}`).all({
          id: 'R1',
          request_id: 'R1',
          digest: 'd',
          list_state: 'awaiting',
          from: '2026-01-01T00:00:00.000Z',
          to: '2026-02-01T00:00:00.000Z',
        }) as { detail: string }[]
      ).map((step) => step.detail);
    const byIndex = expect.stringMatching(/USING (COVERING )?INDEX quarantine_request_idx/);
    expect(planOf('DELETE FROM quarantine WHERE request_id = @id')).toEqual([byIndex]);
    const { summariesInWindow, isSameRaw } = requestSql(SQLITE_DIALECT);
    for (const text of [summariesInWindow, isSameRaw]) expect(planOf(text)).toContainEqual(byIndex);
  });

  it('writes an edit that keeps the indexed columns without rewriting those indexes', async () => {
    const sqlite = sqliteOf(db);
    /** The tables and indexes with a page in the write-ahead log. */
    const loggedPages = () => {
      const wal = readFileSync(`${path}-wal`);
      const pageSize = wal.readUInt32BE(8);
      const pages = new Set<number>();
      for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize)
        pages.add(wal.readUInt32BE(at));
      const owners = sqlite.prepare('SELECT name, pageno FROM dbstat').all() as {
        name: string;
        pageno: number;
      }[];
      return new Set(owners.filter((owner) => pages.has(owner.pageno)).map((o) => o.name));
    };
    /** The pages an edit writes, alone in the log. */
    const edit = async (list: Parameters<typeof listFields>[0], record = {}) => {
      sqlite.pragma('wal_checkpoint(TRUNCATE)');
      expect(await write(detailRecord(record), listFields(list))).toBe('changed');
      return loggedPages();
    };
    const indexes = [
      'requests_event_dt_idx',
      'requests_state_event_dt_idx',
      'requests_account_event_dt_idx',
      'requests_collection_idx',
      'requests_unavailable_idx',
    ];
    await write();
    const kept = await edit(
      { last_updated_timestamp_utc: '2026-11-21T08:10:00Z' },
      { patient_first_name: 'Sean' },
    );
    expect(kept).toContain('requests');
    expect(kept).toContain('requests_summary_idx');
    expect(indexes.filter((name) => kept.has(name))).toEqual([]);
    const moved = await edit({
      state: 'completed',
      last_updated_timestamp_utc: '2026-11-21T08:20:00Z',
    });
    expect(indexes.filter((name) => moved.has(name))).toEqual(indexes);
    const row = sqlite
      .prepare('SELECT list_state, patient_first_name, last_updated_timestamp_utc FROM requests')
      .get();
    expect(row).toEqual({
      list_state: 'completed',
      patient_first_name: 'Seán',
      last_updated_timestamp_utc: '2026-11-21T08:20:00.000Z',
    });
    expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
  });
});
