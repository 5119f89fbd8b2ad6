import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { createStore, type Store, type StoreTx } from '../../../src/db/store.js';
import { normalizeDetail } from '../../../src/sync/normalize.js';
import { createFeedReader } from '../../../src/feed/reader.js';
import { createMigratedTestDatabase, type TestDatabase } from '../../helpers/engine.js';
import { detailRecord, listFields } from '../../helpers/records.js';

/*
 * The change feed's position is request_changes.change_id. A reader tailing it asks for the rows
 * after the last one it saw, so a row must never become visible below a position already read.
 * PostgreSQL runs writers side by side (SQLite has one at a time: this file is left out of the
 * sqlite project), and a sequence value taken at insert would let a writer that commits later
 * show a lower position.
 */

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

/** A promise and the function that resolves it. */
function signal() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Writes a new request of an account and facility of its own (no row lock in common). */
function writeNew(tx: StoreTx, id: string) {
  const facility = { id: `F-${id}`, name: 'Main' };
  const account = { id: `A-${id}`, name: 'Health', service_levels: [], facilities: [facility] };
  return tx.requests.write({
    normalized: normalizeDetail(detailRecord({ request_id: id, account, facility }), listFields()),
    rawJson: '{}',
    source: 'poll',
    observedAt: '2026-11-26T09:00:00.000Z',
  });
}

/** A reader that tails the feed by position, as `transport-sync changes --follow` does. */
function createTailer() {
  const reader = createFeedReader(db);
  let after = 0;
  const seen: string[] = [];
  return {
    seen,
    async poll() {
      for (const change of (await reader.readAfter(after, 100)).changes) {
        seen.push(change.request_id);
        after = change.position;
      }
    },
  };
}

describe('request_changes positions on PostgreSQL', () => {
  it('follow commit order: a tailer misses no change of a writer that commits later', async () => {
    const firstWrote = signal();
    const secondCommitted = signal();
    // The first writer logs its change, then waits while the second writes and commits.
    const first = store.transaction(async (tx) => {
      await writeNew(tx, 'AAAA0001');
      firstWrote.resolve();
      await secondCommitted.promise;
    });
    await firstWrote.promise;
    await store.transaction((tx) => writeNew(tx, 'BBBB0002'));
    const tailer = createTailer();
    await tailer.poll();
    secondCommitted.resolve();
    await first;
    await tailer.poll();
    expect(tailer.seen.sort()).toEqual(['AAAA0001', 'BBBB0002']);
  });
});
