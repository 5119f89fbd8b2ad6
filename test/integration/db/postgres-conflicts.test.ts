import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { createStore, type Store } from '../../../src/db/store.js';
import { normalizeDetail } from '../../../src/sync/normalize.js';
import { createMigratedTestDatabase, queryAll, type TestDatabase } from '../../helpers/engine.js';
import { deferred } from '../../helpers/deferred.js';
import { detailRecord, listFields } from '../../helpers/records.js';

/*
 * Transactions side by side, which only PostgreSQL runs (SQLite has one writer at a time): this
 * file is left out of the sqlite project (vitest.config.ts).
 */

let database: TestDatabase;
let db: MirrorDb;
let store: Store;

beforeEach(async () => {
  database = await createMigratedTestDatabase();
  db = await openDatabase({ location: database.location });
  store = createStore({ db, clock: systemClock });
  for (const id of ['AAAA0001', 'BBBB0002']) {
    await store.transaction((tx) =>
      tx.requests.write({
        normalized: normalizeDetail(detailRecord({ request_id: id }), listFields()),
        rawJson: '{}',
        source: 'poll',
        observedAt: '2026-11-21T09:00:00.000Z',
      }),
    );
  }
});
afterEach(async () => {
  await db.close();
  await database.drop();
});

describe('two transactions that deadlock', () => {
  it('both commit: the one PostgreSQL failed runs again from the start', async () => {
    const touch = 'UPDATE requests SET read_at = @at WHERE request_id = @id';
    const firstHolds = deferred();
    const secondHolds = deferred();
    const firstDone = deferred();
    const secondDone = deferred();
    const runs = { first: 0, second: 0 };
    // Each locks one row, then waits for the other to lock the other row, then asks for it. Run
    // again, the side PostgreSQL failed waits for the other to finish: the store's pause before a
    // retry is a few random milliseconds, and a retry that took its first row before the other
    // side woke would deadlock a second time.
    const first = store.transaction(async (tx) => {
      runs.first += 1;
      if (runs.first > 1) await secondDone.promise;
      await tx.sql.run(touch, { id: 'AAAA0001', at: '2026-11-21T10:00:00.000Z' });
      firstHolds.resolve();
      await secondHolds.promise;
      await tx.sql.run(touch, { id: 'BBBB0002', at: '2026-11-21T10:00:00.000Z' });
    });
    void first.then(firstDone.resolve, firstDone.resolve);
    const second = store.transaction(async (tx) => {
      runs.second += 1;
      if (runs.second > 1) await firstDone.promise;
      await firstHolds.promise;
      await tx.sql.run(touch, { id: 'BBBB0002', at: '2026-11-21T11:00:00.000Z' });
      secondHolds.resolve();
      await tx.sql.run(touch, { id: 'AAAA0001', at: '2026-11-21T11:00:00.000Z' });
    });
    void second.then(secondDone.resolve, secondDone.resolve);
    await Promise.all([first, second]);
    // PostgreSQL failed one of them (deadlock detected) and the store ran it once more.
    expect(runs.first + runs.second).toBe(3);
    const winner = runs.first === 2 ? '2026-11-21T10:00:00.000Z' : '2026-11-21T11:00:00.000Z';
    expect(
      await queryAll(db, 'SELECT request_id, read_at FROM requests ORDER BY request_id'),
    ).toEqual([
      { request_id: 'AAAA0001', read_at: winner },
      { request_id: 'BBBB0002', read_at: winner },
    ]);
  });
});
