import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import type { Sql } from '../../../src/db/sql.js';
import { pruneHistory } from '../../../src/ops/retention.js';
import { createMigratedTestDatabase, queryAll, type TestDatabase } from '../../helpers/engine.js';

/* History pruning, on either engine (backup-retention.test.ts keeps the SQLite backups). */

let database: TestDatabase;
let db: MirrorDb;
beforeEach(async () => {
  database = await createMigratedTestDatabase();
  db = await openDatabase({ location: database.location });
});
afterEach(async () => {
  await db.close();
  await database.drop();
});

const DAY = 86_400_000;
const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);
const at = (daysAgo: number, extraMs = 0) => new Date(NOW - daysAgo * DAY + extraMs).toISOString();

const insertChange = (sql: Sql, requestId: string, observedAt: string) =>
  sql.run(
    `INSERT INTO request_changes (request_id, observed_at, kind, source, changed_columns)
     VALUES (@request_id, @observed_at, 'updated', 'poll', 'x')`,
    { request_id: requestId, observed_at: observedAt },
  );

function seed(): Promise<void> {
  return db.transaction(async (sql) => {
    const run = (started_at: string, finished_at: string | null, status: string) =>
      sql.run(
        `INSERT INTO sync_runs (kind, started_at, finished_at, status)
         VALUES ('poll', @started_at, @finished_at, @status)`,
        { started_at, finished_at, status },
      );
    await run(at(40), at(40), 'ok'); // old: pruned
    await run(at(31), at(30, -1), 'failed'); // finished just before the cutoff: pruned
    await run(at(30), at(30), 'ok'); // exactly at the cutoff: kept
    await run(at(45), null, 'running'); // never finished: kept
    await run(at(1), at(1), 'ok');
    const event = (event_id: string, received_at: string, processed_at: string | null) =>
      sql.run(
        `INSERT INTO webhook_events (event_id, envelope, payload_json, received_at, processed_at)
         VALUES (@event_id, 'v2', '{}', @received_at, @processed_at)`,
        { event_id, received_at, processed_at },
      );
    await event('e1', at(50), at(50)); // old, processed: pruned
    await event('e2', at(50), null); // old, never applied: kept
    await event('e3', at(2), at(2));
    await insertChange(sql, 'R1', at(90));
    await insertChange(sql, 'R1', at(31));
    await insertChange(sql, 'R1', at(29));
  });
}

describe('retention', () => {
  it('deletes exactly the finished runs, processed events and changes older than the retention', async () => {
    await seed();
    const counts = await pruneHistory({ db, retentionDays: 30, now: NOW });
    expect(counts).toEqual({ syncRuns: 2, webhookEvents: 1, requestChanges: 2 });
    const left = (sql: string) => queryAll(db, sql);
    expect(await left('SELECT status, finished_at FROM sync_runs ORDER BY run_id')).toEqual([
      { status: 'ok', finished_at: at(30) },
      { status: 'running', finished_at: null },
      { status: 'ok', finished_at: at(1) },
    ]);
    expect(await left('SELECT event_id FROM webhook_events ORDER BY event_id')).toEqual([
      { event_id: 'e2' },
      { event_id: 'e3' },
    ]);
    expect(await left('SELECT observed_at FROM request_changes')).toEqual([
      { observed_at: at(29) },
    ]);
    // Nothing is left to prune a second time.
    expect(await pruneHistory({ db, retentionDays: 30, now: NOW })).toEqual({
      syncRuns: 0,
      webhookEvents: 0,
      requestChanges: 0,
    });
  });

  it('keeps everything at 0 days, and prunes in batches past 5000 rows', async () => {
    await seed();
    expect(await pruneHistory({ db, retentionDays: 0, now: NOW })).toEqual({
      syncRuns: 0,
      webhookEvents: 0,
      requestChanges: 0,
    });
    await db.transaction(async (sql) => {
      for (let i = 0; i < 12_345; i += 1) await insertChange(sql, 'R2', at(100));
    });
    const counts = await pruneHistory({ db, retentionDays: 30, now: NOW });
    expect(counts.requestChanges).toBe(12_345 + 2);
  });
});
