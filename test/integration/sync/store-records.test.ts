import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import type { Connection, Sql } from '../../../src/db/sql.js';
import { createStore, type Store } from '../../../src/db/store.js';
import { storeRecords, type PendingRecord } from '../../../src/sync/refresh.js';
import {
  countRows,
  createMigratedTestDatabase,
  execute,
  queryAll,
  queryOne,
  testEngine,
  type TestDatabase,
} from '../../helpers/engine.js';
import { detailRecord, listFields } from '../../helpers/records.js';

/* storeRecords' comparison with what is stored, on either engine. */

let database: TestDatabase;
let db: MirrorDb;
let store: Store;
/**
 * Statements run in read-only work, write transactions opened, and the texts of the statements
 * they ran, since the last reset.
 */
const seen = { reads: 0, transactions: 0, written: [] as string[] };

/** `sql`, counting its statements with `count`. */
function counting(sql: Sql, count: (text: string) => void = () => (seen.reads += 1)): Sql {
  return {
    dialect: sql.dialect,
    all(text, params) {
      count(text);
      return sql.all(text, params);
    },
    get(text, params) {
      count(text);
      return sql.get(text, params);
    },
    run(text, params) {
      count(text);
      return sql.run(text, params);
    },
    insertRows(into, rows) {
      count(`INSERT INTO ${into.table}`);
      return sql.insertRows(into, rows);
    },
  };
}

beforeEach(async () => {
  database = await createMigratedTestDatabase();
  db = await openDatabase({ location: database.location });
  const watched: Connection = {
    ...db,
    read: (work, options) => db.read((sql) => work(counting(sql)), options),
    transaction(work) {
      seen.transactions += 1;
      return db.transaction((sql) => work(counting(sql, (text) => seen.written.push(text))));
    },
  };
  store = createStore({ db: watched, clock: systemClock });
});
afterEach(async () => {
  await db.close();
  await database.drop();
});

const OBSERVED_AT = '2026-11-21T09:00:00.000Z';

/** A record as a page of the full list brings it: with its list state only. */
function pending(id: string, state: string, overrides: Record<string, unknown> = {}) {
  const record = detailRecord({ request_id: id, ...overrides });
  return { record, raw: record, list: { state } } satisfies PendingRecord;
}

const storePage = (records: PendingRecord[], observedAt = OBSERVED_AT) =>
  storeRecords(store, records, { source: 'poll', observedAt });

describe('storing a page of records', () => {
  it('passes over the records held exactly, compared per list state, and writes the others', async () => {
    await storePage([
      pending('A1111111', 'awaiting'),
      pending('B2222222', 'accepted'),
      pending('D4444444', 'accepted'),
      pending('E5555555', 'accepted'),
    ]);
    const changesBefore = await countRows(db, 'request_changes');
    seen.reads = 0;
    const outcomes = await storePage(
      [
        pending('A1111111', 'awaiting'),
        pending('B2222222', 'accepted'),
        pending('C3333333', 'awaiting'),
        // Stored under another list state: not held as it is now listed.
        pending('D4444444', 'awaiting'),
        // With the partial list's fields: never passed over, written (here its fields are new).
        { ...pending('E5555555', 'accepted'), list: listFields({ state: 'accepted' }) },
      ],
      '2026-11-21T09:05:00.000Z',
    );
    expect(outcomes).toEqual(['unchanged', 'unchanged', 'new', 'changed', 'changed']);
    // One statement per list state on PostgreSQL; SQLite asks record by record, in-process.
    expect(seen.reads).toBe(testEngine() === 'postgres' ? 2 : 4);
    expect(await countRows(db, 'request_changes')).toBe(changesBefore + 3);
    const moved = await queryOne(
      db,
      'SELECT list_state, synced_at FROM requests WHERE request_id = @id',
      { id: 'D4444444' },
    );
    expect(moved).toEqual({ list_state: 'awaiting', synced_at: '2026-11-21T09:05:00.000Z' });
    const passedOver = await queryOne(db, 'SELECT synced_at FROM requests WHERE request_id = @id', {
      id: 'A1111111',
    });
    expect(passedOver).toEqual({ synced_at: OBSERVED_AT });
  });

  it('opens no write transaction for a page held exactly, and asks nothing for records with list fields', async () => {
    await storePage([pending('A1111111', 'awaiting'), pending('B2222222', 'accepted')]);
    seen.reads = 0;
    seen.transactions = 0;
    const again = await storePage([
      pending('A1111111', 'awaiting'),
      pending('B2222222', 'accepted'),
    ]);
    expect(again).toEqual(['unchanged', 'unchanged']);
    expect(seen.transactions).toBe(0);

    seen.reads = 0;
    const withFields = { ...pending('A1111111', 'awaiting'), list: listFields() };
    await storePage([withFields]);
    expect(seen.reads).toBe(0);
    expect(seen.transactions).toBe(1);
  });

  it('keeps a state-only record holding NUL apart on PostgreSQL, and the rest of its page goes on', async () => {
    await storePage([pending('A1111111', 'awaiting')]);
    const outcomes = await storePage([
      pending('A1111111', 'awaiting'),
      pending('N0000000', 'awaiting', { notes: 'a\u0000b' }),
    ]);
    if (testEngine() === 'sqlite') {
      expect(outcomes).toEqual(['unchanged', 'new']);
    } else {
      expect(outcomes).toEqual(['unchanged', 'quarantined']);
      expect(await countRows(db, 'quarantine', 'request_id = @id', { id: 'N0000000' })).toBe(1);
    }
  });
});

describe('writing a page of records', () => {
  /** A page of `size` records, new or (with another note and a later last_updated) changed. */
  const page = (size: number, lastUpdated: string, notes = 'Stairs at entrance') =>
    Array.from({ length: size }, (_, i) => ({
      ...pending(`P${String(i).padStart(7, '0')}`, 'accepted', {
        enabled_request_fields: { notes },
      }),
      list: listFields({ last_updated_timestamp_utc: lastUpdated }),
    }));
  const LATER = '2026-11-21T08:30:00.000Z';

  it('writes the whole page as one batch, in as many statements whatever its size on PostgreSQL', async () => {
    const counts: number[] = [];
    for (const size of [5, 50]) {
      await storePage(page(size, '2026-11-21T08:00:00.000Z'));
      seen.written = [];
      const outcomes = await storePage(page(size, LATER, 'Ramp'), '2026-11-21T09:05:00.000Z');
      expect(outcomes).toEqual(Array.from({ length: size }, () => 'changed'));
      // One savepoint for the batch: none of the records was written on its own.
      expect(seen.written.filter((text) => text.startsWith('SAVEPOINT'))).toHaveLength(1);
      counts.push(seen.written.length);
      await execute(db, 'DELETE FROM requests');
    }
    // Read, savepoint, requests, the deletes of locations and fields, locations, fields,
    // release, and the quarantine's clear: the account and facility are cached. Then, before
    // COMMIT, the change log and the lock under which it takes its positions (change-log.ts).
    if (testEngine() === 'postgres') expect(counts).toEqual([11, 11]);
    else expect(counts[1]! - counts[0]!).toBeGreaterThan(0);
  });

  it('clears a request’s quarantined copy once stored, unless a later copy in the page is kept apart', async () => {
    const nul = (id: string) => pending(id, 'awaiting', { notes: 'a\u0000b' });
    const outcomes = await storePage([
      nul('Q1111111'),
      pending('Q1111111', 'awaiting'),
      pending('Q2222222', 'awaiting'),
      nul('Q2222222'),
    ]);
    if (testEngine() === 'sqlite') {
      // SQLite holds NUL: every record is stored, and nothing is kept apart.
      expect(outcomes).toEqual(['new', 'changed', 'new', 'changed']);
      expect(await countRows(db, 'quarantine')).toBe(0);
      return;
    }
    expect(outcomes).toEqual(['quarantined', 'new', 'new', 'quarantined']);
    const kept = await queryAll(db, 'SELECT request_id, seen_count FROM quarantine');
    expect(kept).toEqual([{ request_id: 'Q2222222', seen_count: 1 }]);
  });
});
