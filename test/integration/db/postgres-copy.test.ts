import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { copyFile, copyMirror, type CopyLimits } from '../../../src/db/copy.js';
import { openDatabase } from '../../../src/db/open.js';
import type { PostgresConnection } from '../../../src/db/postgres/connection.js';
import type { SqliteConnection } from '../../../src/db/sqlite/connection.js';
import { createStore } from '../../../src/db/store.js';
import { isTransportError } from '../../../src/errors.js';
import { normalizeDetail } from '../../../src/sync/normalize.js';
import { createTestDatabase, queryAll, type TestDatabase } from '../../helpers/engine.js';
import { detailRecord, listFields, tempDir } from '../../helpers/records.js';

/*
 * copyMirror in process, with small batches and pages, so that every table of a small mirror
 * goes over in many of them: the rows cut by count and by size, resumed after the last batch
 * committed, and values that PostgreSQL's array syntax must quote arriving as they left. The
 * CLI's own run (a backfilled mirror, a kill, the worker thread) is test/e2e/postgres-copy.
 * PostgreSQL's alone: left out of the sqlite project (vitest.config.ts).
 */

const REQUESTS = 45;

let database: TestDatabase;
let sourcePath: string;
let source: SqliteConnection;
let target: PostgresConnection;

/** Text that array literals, JSON and keyset pages each have to get right. */
const AWKWARD = [
  'plain',
  'a "quoted" word',
  'back\\slash and \\" both',
  '{braces}, commas, and (parens)',
  'NULL',
  '',
  ' leading and trailing ',
  'line\nbreak\tand tab',
  'Seán Ó Briain, 東京, emoji 🚑',
];

async function openSource(path: string): Promise<SqliteConnection> {
  const db = await openDatabase({ location: path });
  if (db.engine !== 'sqlite') throw new Error('the source is a file');
  return db;
}

/** A SQLite mirror: requests through the store, and rows of every kind of value beside them. */
async function fillSource(db: SqliteConnection): Promise<void> {
  const store = createStore({ db, clock: systemClock });
  for (let i = 0; i < REQUESTS; i += 1) {
    const record = detailRecord({ request_id: `CPY${String(i).padStart(5, '0')}` });
    await store.transaction((tx) =>
      tx.requests.write({
        normalized: normalizeDetail(record, listFields()),
        rawJson: JSON.stringify(record),
        source: 'poll',
        observedAt: '2026-11-21T09:00:00.000Z',
      }),
    );
  }
  const sqlite = db.sqlite;
  const quarantine = sqlite.prepare(
    `INSERT INTO quarantine (record_key, request_id, source, reason, raw_payload, first_seen_at, last_seen_at, seen_count)
     VALUES (?, ?, 'poll', ?, ?, '2026-11-21T09:00:00.000Z', '2026-11-21T09:00:00.123Z', ?)`,
  );
  AWKWARD.forEach((text, index) => {
    // About 1,500 characters a row: a few of them fill a batch of the test's 4,000 bytes.
    const payload = JSON.stringify({ text, nested: { list: [text, null, 1.5, true] } });
    quarantine.run(
      `key ${index} ${text}`,
      index % 2 === 0 ? null : text,
      `${text} `.repeat(Math.ceil(1500 / (text.length + 1))),
      payload,
      index,
    );
  });
  const state = sqlite.prepare(
    "INSERT INTO sync_state (key, value, updated_at) VALUES (?, ?, '2026-11-21T09:00:00.000Z')",
  );
  state.run('last_poll', AWKWARD.join('|'));
  // A lease too old to say a daemon is running, and keys of a cluster: none of them is copied.
  state.run('daemon_owner', '{"pid":1}');
  state.run('member:old-host', 'x');
  sqlite
    .prepare(
      `INSERT INTO outbox_locations (request_id, lat, lng, alt, speed, timestamp, status, created_at)
       VALUES ('CPY00000', 41.87811345678901, -87.6298, NULL, 0.1, 1750000000.25, 'sent', '2026-11-21T09:00:00.000Z')`,
    )
    .run();
  sqlite
    .prepare(
      `INSERT INTO intake_gaps (started_at, ended_at, seconds, reason, is_alarmed)
       VALUES ('2026-11-21T09:00:00.000Z', '2026-11-21T09:05:00.500Z', 300.5, 'daemon_down', 1)`,
    )
    .run();
  const windows = sqlite.prepare(
    `INSERT INTO backfill_windows (backfill_key, window_from, window_to, finished_at, requests_stored)
     VALUES (?, ?, ?, '2026-11-21T09:00:00.000Z', ?)`,
  );
  for (let day = 1; day <= 12; day += 1) {
    const from = `2026-11-${String(day).padStart(2, '0')}T00:00:00.000Z`;
    const to = `2026-11-${String(day + 1).padStart(2, '0')}T00:00:00.000Z`;
    windows.run(day % 3 === 0 ? 'key "b"' : 'key a', from, to, day);
  }
}

beforeEach(async () => {
  sourcePath = join(tempDir(), 'mirror.db');
  source = await openSource(sourcePath);
  await fillSource(source);
  database = await createTestDatabase();
  const db = await openDatabase({ location: database.location });
  if (db.engine !== 'postgres') throw new Error('the target is PostgreSQL');
  target = db;
});
afterEach(async () => {
  await target.close();
  await source.close();
  await database.drop();
});

/** Progress calls, and the rows each batch added, by table. */
function progressLog() {
  const calls: { table: string; copied: number; total: number }[] = [];
  const batches = (table: string) => {
    const mine = calls.filter((call) => call.table === table);
    return mine.map((call, index) => call.copied - (index === 0 ? 0 : mine[index - 1]!.copied));
  };
  return {
    calls,
    batches,
    onProgress: (table: string, copied: number, total: number) => {
      calls.push({ table, copied, total });
    },
  };
}

const sourceRows = <T>(sql: string) => source.sqlite.prepare(sql).all() as T[];

describe('copyMirror', () => {
  it('copies every table equal in batches cut by rows and by size, values that need quoting as they were', async () => {
    const limits: CopyLimits = { rows: 7, bytes: 4000 };
    const progress = progressLog();
    const results = await copyMirror({ source, target, limits, onProgress: progress.onProgress });

    expect(results.filter((result) => !result.isEqual)).toEqual([]);
    // Narrow rows go 7 to a batch; quarantine's rows of about 1,500 characters, 3 (4,000 bytes).
    expect(Math.max(...progress.batches('request_fields'))).toBe(7);
    expect(progress.batches('request_fields').length).toBe(Math.ceil((REQUESTS * 4) / 7));
    expect(progress.batches('quarantine')).toEqual([3, 3, 3]);
    expect(progress.calls.every((call) => call.copied <= call.total)).toBe(true);
    expect(progress.calls.filter((call) => call.table === 'requests').at(-1)).toEqual({
      table: 'requests',
      copied: REQUESTS,
      total: REQUESTS,
    });

    // Read back from PostgreSQL: every text as written, JSON by value.
    const copied = await queryAll<Record<string, unknown>>(
      target,
      'SELECT record_key, request_id, reason, raw_payload, seen_count FROM quarantine ORDER BY seen_count',
    );
    const original = sourceRows<Record<string, unknown>>(
      'SELECT record_key, request_id, reason, raw_payload, seen_count FROM quarantine ORDER BY seen_count',
    );
    expect(
      copied.map((row) => ({ ...row, raw_payload: JSON.parse(String(row.raw_payload)) })),
    ).toEqual(
      original.map((row) => ({ ...row, raw_payload: JSON.parse(String(row.raw_payload)) })),
    );
    // sync_state: the mirror's keys; neither the daemons' nor the copy's own.
    expect(await queryAll(target, 'SELECT key, value FROM sync_state ORDER BY key')).toEqual([
      { key: 'last_poll', value: AWKWARD.join('|') },
    ]);
    expect(
      await queryAll(
        target,
        'SELECT lat, lng, alt, speed, timestamp, status FROM outbox_locations',
      ),
    ).toEqual([
      {
        lat: 41.87811345678901,
        lng: -87.6298,
        alt: null,
        speed: 0.1,
        timestamp: 1750000000.25,
        status: 'sent',
      },
    ]);
    expect(await queryAll(target, 'SELECT ended_at, seconds, is_alarmed FROM intake_gaps')).toEqual(
      [{ ended_at: '2026-11-21T09:05:00.500Z', seconds: 300.5, is_alarmed: 1 }],
    );
    // Identities continue after the ids copied.
    const [next] = await target.transaction((sql) =>
      sql.all<{ outbox_id: number }>(
        "INSERT INTO outbox_locations (request_id) VALUES ('CPY00001') RETURNING outbox_id",
      ),
    );
    expect(next!.outbox_id).toBe(2);
  });

  it('resumes after the last batch it committed, and counts what the first run copied', async () => {
    const limits: CopyLimits = { rows: 10, bytes: 2 ** 20 };
    const interrupted = new Error('interrupted');
    await expect(
      copyMirror({
        source,
        target,
        limits,
        onProgress: (table, copied) => {
          if (table === 'requests' && copied >= 20) throw interrupted;
        },
      }),
    ).rejects.toBe(interrupted);
    // Two batches committed, each with its checkpoint; the third was read, never written.
    expect(await queryAll(target, 'SELECT count(*)::int AS n FROM requests')).toEqual([{ n: 20 }]);
    const checkpoint = await queryAll<{ value: string }>(
      target,
      "SELECT value FROM sync_state WHERE key = 'copy:requests'",
    );
    const rowid = (
      source.sqlite
        .prepare('SELECT rowid AS id FROM requests ORDER BY rowid LIMIT 1 OFFSET 19')
        .get() as { id: number }
    ).id;
    expect(checkpoint).toEqual([{ value: String(rowid) }]);

    const progress = progressLog();
    const results = await copyMirror({ source, target, limits, onProgress: progress.onProgress });
    expect(results.filter((result) => !result.isEqual)).toEqual([]);
    expect(results.find((result) => result.table === 'requests')).toMatchObject({
      rows: REQUESTS,
      copied: REQUESTS - 20,
    });
    expect(progress.calls.find((call) => call.table === 'requests')).toEqual({
      table: 'requests',
      copied: 30,
      total: REQUESTS,
    });
    // Equal: the copy's checkpoints are gone.
    expect(await queryAll(target, "SELECT key FROM sync_state WHERE key LIKE 'copy:%'")).toEqual(
      [],
    );
  });

  it("refuses a target that holds another mirror's unfinished copy", async () => {
    await expect(
      copyMirror({
        source,
        target,
        limits: { rows: 10, bytes: 2 ** 20 },
        onProgress: () => {
          throw new Error('interrupted');
        },
      }),
    ).rejects.toThrow('interrupted');
    const other = await openSource(join(tempDir(), 'other.db'));
    try {
      const refused = await copyMirror({ source: other, target }).catch((error: unknown) => error);
      expect(isTransportError(refused, 'copy.target_busy')).toBe(true);
      expect((refused as Error).message).toContain(sourcePath);
    } finally {
      await other.close();
    }
  });
});

describe('copyFile', () => {
  it('refuses a source whose daemon renewed its lease within the minute, before opening the target', async () => {
    source.sqlite
      .prepare("UPDATE sync_state SET updated_at = ? WHERE key = 'daemon_owner'")
      .run(new Date().toISOString());
    let isStarted = false;
    const refused = await copyFile({
      sourcePath,
      target: { location: database.location },
      onStarted: () => (isStarted = true),
    }).catch((error: unknown) => error);
    expect(isTransportError(refused, 'copy.source_in_use')).toBe(true);
    expect(isStarted).toBe(false);
    expect(await queryAll(target, 'SELECT count(*)::int AS n FROM sync_state')).toEqual([{ n: 0 }]);
  });
});
