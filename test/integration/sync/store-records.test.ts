import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import type { Connection, Sql } from '../../../src/db/sql.js';
import { createStore, type Store } from '../../../src/db/store.js';
import { storeRecords, type PendingRecord } from '../../../src/sync/refresh.js';
import {
  countRows,
  createTestDatabase,
  queryOne,
  testEngine,
  type TestDatabase,
} from '../../helpers/engine.js';
import { detailRecord, listFields } from '../../helpers/records.js';

/* storeRecords' comparison with what is stored, on either engine. */

let database: TestDatabase;
let db: MirrorDb;
let store: Store;
/** Statements run in read-only work, and write transactions opened, since the last reset. */
const seen = { reads: 0, transactions: 0 };

/** `sql`, counting its statements into `seen.reads`. */
function counting(sql: Sql): Sql {
  return {
    dialect: sql.dialect,
    all(text, params) {
      seen.reads += 1;
      return sql.all(text, params);
    },
    get(text, params) {
      seen.reads += 1;
      return sql.get(text, params);
    },
    run(text, params) {
      seen.reads += 1;
      return sql.run(text, params);
    },
  };
}

beforeEach(async () => {
  database = await createTestDatabase();
  db = await openDatabase({ location: database.location });
  const watched: Connection = {
    ...db,
    read: (work, options) => db.read((sql) => work(counting(sql)), options),
    transaction(work) {
      seen.transactions += 1;
      return db.transaction(work);
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
