import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { migrate as migrateSqlite } from 'drizzle-orm/better-sqlite3/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/node-postgres';
import { migrate as migratePostgres } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import {
  knownSchemaVersion,
  openDatabase,
  schemaVersion,
  type MirrorDb,
} from '../../../src/db/open.js';
import { migrationsFolder } from '../../../src/db/migrations.js';
import { createStore, type Store } from '../../../src/db/store.js';
import { normalizeDetail } from '../../../src/sync/normalize.js';
import { toEventRow } from '../../../src/webhooks/envelope.js';
import {
  createMigratedTestDatabase,
  createTestDatabase,
  execute,
  queryAll,
  queryOne,
  testEngine,
  type TestDatabase,
} from '../../helpers/engine.js';
import {
  outboxRows,
  queueAction,
  queueLocations,
  samplesFrom,
  type DeliveryRow,
} from '../../helpers/outbox.js';
import { detailRecord, listFields, tempDir } from '../../helpers/records.js';

/* The store on either engine; store.sqlite.test.ts has what only the SQLite file shows. */

let database: TestDatabase;
let db: MirrorDb;
let store: Store;

beforeEach(async () => {
  database = await createMigratedTestDatabase();
  db = await openDatabase({ location: database.location });
  store = createStore({ db, clock: systemClock });
});
afterEach(async () => {
  await db.close();
  await database.drop();
});

/** Where drizzle's migrator records the migrations it applied, on this engine. */
const MIGRATIONS_TABLE =
  testEngine() === 'postgres' ? 'drizzle.__drizzle_migrations' : '__drizzle_migrations';

function write(
  record = detailRecord(),
  list = listFields(),
  observedAt = '2026-11-21T09:00:00.000Z',
  source: 'poll' | 'backfill' = 'poll',
) {
  return store.transaction((tx) =>
    tx.requests.write({
      normalized: normalizeDetail(record, list),
      rawJson: JSON.stringify(record),
      source,
      observedAt,
    }),
  );
}

/** The same detail observation of request `id`, for writes that differ only by request. */
const observation = (id: string) => ({
  normalized: normalizeDetail(detailRecord({ request_id: id }), listFields()),
  rawJson: '{}',
  source: 'poll' as const,
  observedAt: '2026-11-21T09:00:00.000Z',
});

describe('the mirror database', () => {
  it('is created with every migration', async () => {
    expect(await schemaVersion(db)).toBeGreaterThanOrEqual(2);
    expect(await schemaVersion(db)).toBe(knownSchemaVersion(db));
  });

  it('brings a database a migration behind up to date when opened', async () => {
    // As the previous version left it: every migration but the newest, applied by drizzle's
    // migrator from a copy of the folder whose journal ends one entry earlier.
    const engine = testEngine();
    const folder = join(tempDir(), `migrations-${engine}`);
    cpSync(migrationsFolder(engine), folder, { recursive: true });
    const journalPath = join(folder, 'meta/_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: unknown[] };
    journal.entries.pop();
    writeFileSync(journalPath, JSON.stringify(journal));
    const older = await createTestDatabase('older.db');
    try {
      if (engine === 'postgres') {
        const client = new pg.Client({ connectionString: older.location });
        await client.connect();
        try {
          await migratePostgres(drizzlePostgres({ client }), { migrationsFolder: folder });
        } finally {
          await client.end();
        }
      } else {
        const sqlite = new Database(older.location);
        try {
          migrateSqlite(drizzleSqlite(sqlite), { migrationsFolder: folder });
        } finally {
          sqlite.close();
        }
      }
      const before = await openDatabase({ location: older.location, shouldMigrate: false });
      try {
        expect(await schemaVersion(before)).toBe(knownSchemaVersion(before) - 1);
      } finally {
        await before.close();
      }
      const opened = await openDatabase({ location: older.location });
      try {
        expect(await schemaVersion(opened)).toBe(knownSchemaVersion(opened));
        // The newest migration's column is there.
        expect(await queryAll(opened, 'SELECT committed_at FROM request_changes')).toEqual([]);
      } finally {
        await opened.close();
      }
    } finally {
      await older.drop();
    }
  });

  it('is migrated once when several processes open a new database at once', async () => {
    // Daemons of a cluster starting together. On PostgreSQL each sees the database behind
    // without the lock, then takes it in turn and looks again: the first migrates, the others
    // find it done. Concurrent DDL would fail with duplicate tables.
    const fresh = await createTestDatabase('together.db');
    try {
      const opened = await Promise.all(
        [1, 2, 3].map(() => openDatabase({ location: fresh.location })),
      );
      try {
        for (const one of opened) expect(await schemaVersion(one)).toBe(knownSchemaVersion(one));
        const rows = await queryAll(opened[0]!, `SELECT hash FROM ${MIGRATIONS_TABLE}`);
        expect(rows).toHaveLength(knownSchemaVersion(opened[0]!));
      } finally {
        await Promise.all(opened.map((one) => one.close()));
      }
    } finally {
      await fresh.drop();
    }
  });

  it('refuses a database from a newer schema', async () => {
    await execute(
      db,
      `INSERT INTO ${MIGRATIONS_TABLE} (hash, created_at) VALUES (@hash, @created_at)`,
      { hash: 'future', created_at: 9_999_999_999_999 },
    );
    await db.close();
    await expect(openDatabase({ location: database.location })).rejects.toThrow(
      /newer than this transport-sync knows/,
    );
    await expect(
      openDatabase({ location: database.location, shouldMigrate: false, isReadOnly: true }),
    ).rejects.toThrow(/newer/);
    const other = await createMigratedTestDatabase('other.db');
    await database.drop();
    database = other;
    db = await openDatabase({ location: other.location });
  });
});

describe('transactions', () => {
  // The test workers run with the nesting check on (test/setup/nesting-check.ts).
  it('refuse one opened inside another, and queue one opened beside it', async () => {
    const nested = db.transaction(async () => {
      await expect(db.transaction(async () => 1)).rejects.toThrow(/opened inside another/);
      await expect(db.read(async () => 1)).rejects.toThrow(/opened inside another/);
      return 'outer';
    });
    const beside = db.transaction(async (sql) => sql.get<{ one: number }>('SELECT 1 AS one'));
    expect(await nested).toBe('outer');
    expect(await beside).toEqual({ one: 1 });
  });
});

describe('writing requests', () => {
  it('stores canonical values, child rows and a created change', async () => {
    expect(await write()).toBe('new');
    const row = (await queryOne(db, 'SELECT * FROM requests'))!;
    expect(row).toMatchObject({
      request_id: 'K3J9QX2A',
      list_state: 'accepted',
      patient_last_name: "O'Brien",
      patient_dob: '1948-02-29',
      transport_pickup_time: '2026-11-22T14:00:00.000Z',
      transport_agreed_for_time: '2026-11-22T14:30:00.000Z',
      is_round_trip_first_trip: 1,
      is_round_trip_return_trip: 0,
      created_timestamp_utc: '2026-11-20T08:00:00.000Z',
      last_updated_timestamp_utc: '2026-11-21T08:00:00.000Z',
      unavailable_at: null,
      source: 'poll',
    });
    expect(JSON.parse(row.raw_json as string)).toEqual(detailRecord());
    expect(
      await queryAll(db, 'SELECT role, location_id, city FROM request_locations ORDER BY role'),
    ).toEqual([
      { role: 'destination', location_id: 'LOC2', city: 'Chicago' },
      { role: 'pickup', location_id: 'LOC1', city: 'Chicago' },
    ]);
    // value_json is JSON (jsonb on PostgreSQL, which reprints it): compared parsed.
    const fields = await queryAll<{ scope: string; name: string; value_json: string | null }>(
      db,
      'SELECT scope, name, value_json FROM request_fields ORDER BY scope, name',
    );
    expect(
      fields.map((f) => ({
        ...f,
        value_json: f.value_json === null ? null : JSON.parse(f.value_json),
      })),
    ).toEqual([
      { scope: 'patient', name: 'isolation', value_json: null },
      { scope: 'patient', name: 'weight_lbs', value_json: 180 },
      { scope: 'request', name: 'notes', value_json: 'Stairs at entrance' },
      { scope: 'request', name: 'o2_lpm', value_json: '2' },
    ]);
    expect(await queryAll(db, 'SELECT kind, new_state FROM request_changes')).toEqual([
      { kind: 'created', new_state: 'accepted' },
    ]);
    expect(
      await queryOne(
        db,
        'SELECT account_name, facility_name, effective_pickup_time, pickup_city FROM request_overview',
      ),
    ).toEqual({
      account_name: 'Mercy Health',
      facility_name: 'Mercy Main',
      effective_pickup_time: '2026-11-22T14:30:00.000Z',
      pickup_city: 'Chicago',
    });
  });

  it('treats the same content in another timestamp form as unchanged', async () => {
    await write();
    const sameInOtherForms = detailRecord({
      transport_pickup_time: '2026-11-22T14:00:00.000Z',
      transport_agreed_for_time: '2026-11-22T15:30:00+01:00',
    });
    expect(
      await write(
        sameInOtherForms,
        listFields({ last_updated_timestamp_utc: '2026-11-21T08:00:00.000Z' }),
      ),
    ).toBe('changed'); // raw differs
    expect(
      await write(
        sameInOtherForms,
        listFields({ last_updated_timestamp_utc: '2026-11-21T08:00:00.000+00:00' }),
      ),
    ).toBe('unchanged');
  });

  it('logs what changed with old and new values, so a report can see when a state or time moved', async () => {
    await write();
    const moved = detailRecord({
      transport_agreed_for_time: '2026-11-22T16:00:00Z',
      request_current_state: 'completed',
    });
    expect(
      await write(
        moved,
        listFields({ state: 'completed', last_updated_timestamp_utc: '2026-11-21T10:00:00Z' }),
        '2026-11-21T10:01:00.000Z',
      ),
    ).toBe('changed');
    const change = (await queryOne<{
      changed_columns: string;
      old_values_json: string;
      new_values_json: string;
    }>(db, "SELECT * FROM request_changes WHERE kind = 'updated'"))!;
    expect(change.changed_columns.split(',')).toEqual([
      'list_state',
      'request_current_state',
      'transport_agreed_for_time',
      'last_updated_timestamp_utc',
    ]);
    expect(change).toMatchObject({
      old_state: 'accepted',
      new_state: 'completed',
      observed_at: '2026-11-21T10:01:00.000Z',
    });
    expect(JSON.parse(change.old_values_json).transport_agreed_for_time).toBe(
      '2026-11-22T14:30:00.000Z',
    );
    expect(JSON.parse(change.new_values_json).transport_agreed_for_time).toBe(
      '2026-11-22T16:00:00.000Z',
    );
  });

  it('never lets an older observation overwrite a newer one', async () => {
    await write(
      detailRecord({ service_level_type: 'ALS' }),
      listFields({ last_updated_timestamp_utc: '2026-11-21T10:00:00Z' }),
    );
    expect(
      await write(
        detailRecord({ service_level_type: 'BLS' }),
        listFields({ last_updated_timestamp_utc: '2026-11-21T09:00:00Z' }),
        '2026-11-21T11:00:00.000Z',
        'backfill',
      ),
    ).toBe('stale');
    const older = normalizeDetail(detailRecord({ service_level_type: 'CCT' }));
    const outcome = await store.transaction((tx) =>
      tx.requests.write({
        normalized: older,
        rawJson: '{}',
        source: 'backfill',
        observedAt: '2026-11-21T08:59:00.000Z',
      }),
    );
    expect(outcome).toBe('stale');
    expect(await queryOne(db, 'SELECT service_level_type FROM requests')).toEqual({
      service_level_type: 'ALS',
    });
  });

  it('keeps list-only values when a detail arrives without the list, and keeps facilities on exclude_facilities', async () => {
    await write();
    const detailOnly = detailRecord({
      service_level_type: 'ALS',
      account: { id: 'ACC1', name: 'Mercy Health', service_levels: ['ALS'], facilities: null },
    });
    await store.transaction((tx) =>
      tx.requests.write({
        normalized: normalizeDetail(detailOnly),
        rawJson: JSON.stringify(detailOnly),
        source: 'poll',
        observedAt: '2026-11-21T10:00:00.000Z',
      }),
    );
    expect(
      await queryOne(
        db,
        'SELECT created_timestamp_utc, last_updated_timestamp_utc, list_state, service_level_type FROM requests',
      ),
    ).toEqual({
      created_timestamp_utc: '2026-11-20T08:00:00.000Z',
      last_updated_timestamp_utc: '2026-11-21T08:00:00.000Z',
      list_state: 'accepted',
      service_level_type: 'ALS',
    });
    const account = await queryOne<{ facilities_json: string }>(
      db,
      'SELECT facilities_json FROM accounts',
    );
    expect(JSON.parse(account!.facilities_json)).toHaveLength(1);
  });

  it('marks a request unavailable without deleting it, and clears the mark when it comes back', async () => {
    await write();
    expect(
      await store.transaction((tx) =>
        tx.requests.markUnavailable('K3J9QX2A', '2026-11-21T11:00:00.000Z', 'poll'),
      ),
    ).toBe(true);
    expect(
      await store.transaction((tx) =>
        tx.requests.markUnavailable('K3J9QX2A', '2026-11-21T11:05:00.000Z', 'poll'),
      ),
    ).toBe(false);
    expect(await queryOne(db, 'SELECT unavailable_at FROM requests')).toEqual({
      unavailable_at: '2026-11-21T11:00:00.000Z',
    });
    expect(await queryOne(db, 'SELECT count(*) AS n FROM request_locations')).toEqual({
      n: 2,
    });
    await write(detailRecord(), listFields(), '2026-11-21T12:00:00.000Z');
    expect(await queryOne(db, 'SELECT unavailable_at FROM requests')).toEqual({
      unavailable_at: null,
    });
    expect(
      (
        await queryAll<{ kind: string }>(db, 'SELECT kind FROM request_changes ORDER BY change_id')
      ).map((row) => row.kind),
    ).toEqual(['created', 'unavailable', 'available']);
  });

  it('rolls back a whole request when any part of its write fails', async () => {
    await expect(
      store.transaction(async (tx) => {
        await tx.requests.write({
          normalized: normalizeDetail(detailRecord(), listFields()),
          rawJson: '{}',
          source: 'poll',
          observedAt: '2026-11-21T09:00:00.000Z',
        });
        throw new Error('disk full');
      }),
    ).rejects.toThrow('disk full');
    expect(await queryOne(db, 'SELECT count(*) AS n FROM requests')).toEqual({ n: 0 });
    expect(await queryOne(db, 'SELECT count(*) AS n FROM request_locations')).toEqual({
      n: 0,
    });
  });

  it('stores the account and facility of a batch whose first request rolled back to its savepoint', async () => {
    await store.transaction(async (tx) => {
      // The first request writes the account and facility, then fails: its savepoint rolls back.
      await expect(
        tx.savepoint(async () => {
          await tx.requests.write(observation('K3J9QX2A'));
          throw new Error('bad record');
        }),
      ).rejects.toThrow('bad record');
      // The next one shares them: they must be written again, not taken as already stored.
      await tx.savepoint(() => tx.requests.write(observation('M7P2WQ4B')));
    });
    expect(await queryAll(db, 'SELECT request_id FROM requests')).toEqual([
      { request_id: 'M7P2WQ4B' },
    ]);
    expect(await queryOne(db, 'SELECT account_name, facility_name FROM request_overview')).toEqual({
      account_name: 'Mercy Health',
      facility_name: 'Mercy Main',
    });
  });

  it('stores the account of a request whose transaction ran beside one that wrote it and rolled back', async () => {
    let rollBack!: () => void;
    const rolledBack = new Promise<void>((resolve) => (rollBack = resolve));
    let firstWrote!: () => void;
    const wroteFirst = new Promise<void>((resolve) => (firstWrote = resolve));
    // The first transaction writes a request with its account, then waits and rolls back.
    const first = store.transaction(async (tx) => {
      await tx.requests.write(observation('K3J9QX2A'));
      firstWrote();
      await rolledBack;
      throw new Error('rolled back');
    });
    await wroteFirst;
    // The second, beside it (PostgreSQL; SQLite runs it after), stores another request of the
    // same account. It must not take the uncommitted account for stored.
    let isSecondDone = false;
    const second = store
      .transaction((tx) => tx.requests.write(observation('M7P2WQ4B')))
      .finally(() => (isSecondDone = true));
    if (db.engine === 'postgres') {
      // Either it finished without the account, or it waits for the first's lock on that row.
      await vi.waitUntil(
        async () =>
          isSecondDone ||
          (await queryOne<{ n: number }>(
            db,
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          ))!.n > 0,
        { timeout: 10_000, interval: 20 },
      );
    }
    rollBack();
    await expect(first).rejects.toThrow('rolled back');
    await second;
    expect(await queryAll(db, 'SELECT request_id FROM requests')).toEqual([
      { request_id: 'M7P2WQ4B' },
    ]);
    expect(await queryOne(db, 'SELECT account_name, facility_name FROM request_overview')).toEqual({
      account_name: 'Mercy Health',
      facility_name: 'Mercy Main',
    });
  });

  it('tells in one statement which records of a page it holds exactly, position by position', async () => {
    const record = detailRecord();
    const text = JSON.stringify(record);
    await store.transaction((tx) =>
      tx.requests.write({
        normalized: normalizeDetail(record, listFields({ state: 'awaiting' })),
        rawJson: text,
        source: 'poll',
        observedAt: '2026-11-21T09:00:00.000Z',
      }),
    );
    const other = JSON.stringify(detailRecord({ notes: 'Ring twice' }));
    const ask = (records: { id: string; text: string }[], state = 'awaiting') =>
      store.read((tx) => tx.requests.sameRaw(records, state));
    // The same id twice in a page, once as stored and once changed: only the first is held.
    expect(
      await ask([
        { id: 'K3J9QX2A', text: other },
        { id: 'K3J9QX2A', text },
        { id: 'M7P2WQ4B', text },
      ]),
    ).toEqual([false, true, false]);
    expect(await ask([{ id: 'K3J9QX2A', text }], 'accepted')).toEqual([false]);
    expect(await ask([])).toEqual([]);
    // A record with a NUL (which PostgreSQL cannot hold) is simply not held; the rest still are.
    expect(
      await ask([
        { id: 'K3J9QX2A', text: JSON.stringify(detailRecord({ notes: 'a\u0000b' })) },
        { id: 'K3J9QX2A', text },
      ]),
    ).toEqual([false, true]);
    await store.transaction((tx) =>
      tx.quarantine.add(
        { requestId: 'K3J9QX2A', reason: 'test', raw: record },
        'poll',
        '2026-11-21T09:01:00.000Z',
      ),
    );
    expect(await ask([{ id: 'K3J9QX2A', text }])).toEqual([false]);
  });

  it('reads the summaries of many requests at once, leaving out those not stored', async () => {
    // Ids with the characters an array or JSON literal would have to escape.
    const ids = ['M7P2WQ4B', 'K3J9QX2A', 'Q"uote,1', 'B{r}ace\\2'];
    for (const [index, id] of ids.entries()) {
      const list = listFields({ state: index % 2 === 0 ? 'accepted' : 'awaiting' });
      await write(detailRecord({ request_id: id }), list);
    }
    await store.transaction((tx) =>
      tx.requests.markUnavailable('K3J9QX2A', '2026-11-21T10:00:00.000Z', 'poll'),
    );
    const asked = ['NOTSTORED', ...ids, "O'Brien"];
    const found = await store.read((tx) => tx.requests.summaries(asked));
    expect([...found.keys()].sort()).toEqual([...ids].sort());
    for (const id of ids) {
      expect(found.get(id)).toEqual(await store.read((tx) => tx.requests.summary(id)));
    }
    expect(found.get('K3J9QX2A')!.unavailable_at).toBe('2026-11-21T10:00:00.000Z');
    expect(await store.read((tx) => tx.requests.summaries([]))).toEqual(new Map());
    expect(await store.read((tx) => tx.requests.summaries(['NOTSTORED']))).toEqual(new Map());
  });

  it('spells the times of the summaries as every other read of the row does', async () => {
    // On PostgreSQL the summaries format their times in SQL, the other reads through the
    // connection's type parser: both must give canonical ISO UTC, with three fraction digits
    // (PostgreSQL sends '.12' for 120 ms).
    await write(detailRecord({ request_id: 'M7P2WQ4B' }));
    const at =
      testEngine() === 'postgres' ? '2026-11-21 10:00:00.12+00' : '2026-11-21T10:00:00.120Z';
    await execute(db, 'UPDATE requests SET read_at = @at, unavailable_at = @at', { at });
    const [row] = await queryAll<Record<string, string>>(
      db,
      'SELECT event_dt_utc, last_updated_timestamp_utc, unavailable_at, read_at FROM requests',
    );
    const summary = await store.read((tx) => tx.requests.summary('M7P2WQ4B'));
    expect(row!.read_at).toBe('2026-11-21T10:00:00.120Z');
    for (const column of Object.keys(row!))
      expect(summary?.[column as keyof typeof summary], column).toBe(row![column]);
    const window = await store.read((tx) =>
      tx.requests.summariesInWindow('2000-01-01T00:00:00.000Z', '2100-01-01T00:00:00.000Z'),
    );
    expect(window).toEqual([summary]);
  });

  it('stores a group of deliveries in one go, telling which were new as storing each in turn would', async () => {
    const delivery = (eventId: string, payload: Record<string, unknown> = {}) => {
      const body = Buffer.from(JSON.stringify({ event_id: eventId, ...payload }));
      return toEventRow(
        JSON.parse(body.toString()) as Record<string, unknown>,
        body,
        '2026-11-21T09:00:00.000Z',
      );
    };
    expect(await store.transaction((tx) => tx.events.insertMany([delivery('evt_1')]))).toEqual([
      true,
    ]);
    // Stored already, new, repeated within the group, one holding a NUL, one half a pair.
    const group = [
      delivery('evt_1'),
      delivery('evt_2'),
      delivery('evt_2'),
      delivery('evt_3', { note: 'a\u0000b' }),
      delivery('evt_4', { note: 'Smith \ud83d' }),
      delivery('evt_5'),
    ];
    expect(await store.transaction((tx) => tx.events.insertMany(group))).toEqual([
      false,
      true,
      false,
      true,
      true,
      true,
    ]);
    expect(await store.transaction((tx) => tx.events.insertMany([]))).toEqual([]);
    const rows = await queryAll<{ event_id: string; is_done: number; error: string | null }>(
      db,
      'SELECT event_id, processed_at IS NOT NULL AS is_done, error FROM webhook_events ORDER BY event_id',
    );
    const keptApart = testEngine() === 'postgres';
    expect(rows.map((row) => [row.event_id, Boolean(row.is_done), row.error !== null])).toEqual([
      ['evt_1', false, false],
      ['evt_2', false, false],
      ['evt_3', keptApart, keptApart],
      ['evt_4', keptApart, keptApart],
      ['evt_5', false, false],
    ]);
  });

  it('marks any number of outbox rows at once, only pending ones, only in its table', async () => {
    await queueLocations(db, 'K3J9QX2A', samplesFrom(1_795_000_000, 250));
    await queueAction(db, 'K3J9QX2A', { kind: 'accept' });
    const ids = (await outboxRows(db, 'outbox_locations')).map((row) => row.outbox_id);
    // An operator failed the last row by hand: no mark of the store's overrides that.
    await execute(db, "UPDATE outbox_locations SET status = 'failed' WHERE outbox_id = @id", {
      id: ids.at(-1),
    });
    const at = '2026-11-21T09:00:00.000Z';
    const later = '2026-11-21T09:05:00.000Z';
    const [first, second, third] = ids;
    await store.transaction(async (tx) => {
      await tx.outbox.locations.claim(ids, 'in flight');
      await tx.outbox.locations.markRetry([first!, second!], 'timeout', later);
      await tx.outbox.locations.markFailed([third!], 'rejected');
      await tx.outbox.locations.markSent(ids.slice(3), at, 'note');
      await tx.outbox.locations.markSent([], at);
    });
    const rows = await outboxRows(db, 'outbox_locations');
    const columns = ({ status, attempts, last_error, next_attempt_at, sent_at }: DeliveryRow) => ({
      status,
      attempts,
      last_error,
      next_attempt_at,
      sent_at,
    });
    expect(rows.slice(0, 3).map(columns)).toEqual([
      {
        status: 'pending',
        attempts: 1,
        last_error: 'timeout',
        next_attempt_at: later,
        sent_at: null,
      },
      {
        status: 'pending',
        attempts: 1,
        last_error: 'timeout',
        next_attempt_at: later,
        sent_at: null,
      },
      {
        status: 'failed',
        attempts: 1,
        last_error: 'rejected',
        next_attempt_at: null,
        sent_at: null,
      },
    ]);
    const sent = {
      status: 'sent',
      attempts: 1,
      last_error: 'note',
      next_attempt_at: null,
      sent_at: at,
    };
    expect(rows.slice(3, -1).map(columns)).toEqual(rows.slice(3, -1).map(() => sent));
    expect(columns(rows.at(-1)!)).toEqual({
      status: 'failed',
      attempts: 0,
      last_error: null,
      next_attempt_at: null,
      sent_at: null,
    });
    // The action shares an outbox_id with a location row, in a table of its own.
    const [action] = await outboxRows(db, 'outbox_actions');
    expect(ids).toContain(action!.outbox_id);
    expect(columns(action!)).toEqual({
      status: 'pending',
      attempts: 0,
      last_error: null,
      next_attempt_at: null,
      sent_at: null,
    });
  });

  it('lets a reader holding a read transaction coexist with a write', async () => {
    await write();
    // Another connection, as another program would read (a WAL reader on SQLite).
    const reader = await openDatabase({
      location: database.location,
      isReadOnly: true,
      shouldMigrate: false,
    });
    const count = 'SELECT count(*) AS n FROM requests';
    await reader.read(
      async (sql) => {
        expect(await sql.get(count)).toEqual({ n: 1 });
        await write(detailRecord({ request_id: 'SECOND01' }));
        expect(await sql.get(count)).toEqual({ n: 1 });
      },
      { isSnapshot: true },
    );
    expect(await queryOne(reader, count)).toEqual({ n: 2 });
    await reader.close();
  });
});
