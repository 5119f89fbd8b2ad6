import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import type { DriftObservation, NewDrift, RecordDrift } from '../../../src/db/store/drift-store.js';
import { createStore, type Store } from '../../../src/db/store.js';
import {
  createMigratedTestDatabase,
  execute,
  queryAll,
  type TestDatabase,
} from '../../helpers/engine.js';

/*
 * drift.recordMany against drift.record one record at a time, on either engine: the same
 * schema_drift rows (counts, the first request of a shared unknown member, the last type
 * received, when first and last seen) and the same drifts reported new, whatever the batch
 * holds, keys repeated within it included.
 */

const observation = fc.record({
  member: fc.constantFrom('patient_dob', 'notes', 'mileage', 'level'),
  problem: fc.constantFrom('missing', 'type', 'unknown'),
  expected: fc.constantFrom('string', 'date', null),
  received: fc.constantFrom('number', 'string', 'boolean', null),
}) as fc.Arbitrary<DriftObservation>;

const batch = fc.array(
  fc.record({
    requestId: fc.constantFrom('A1', 'B2', 'C3'),
    source: fc.constantFrom('poll', 'webhook'),
    drift: fc.array(observation, { maxLength: 3 }),
    // Each record's own time, in any order (the poll's records carry when each was read).
    at: fc
      .integer({ min: 0, max: 59 })
      .map((s) => `2026-11-26T10:00:${String(s).padStart(2, '0')}.000Z`),
  }),
  { maxLength: 6 },
) as fc.Arbitrary<RecordDrift[]>;

interface Side {
  database: TestDatabase;
  db: MirrorDb;
  store: Store;
}

let oneByOne: Side;
let inSets: Side;

async function openSide(name: string): Promise<Side> {
  const database = await createMigratedTestDatabase(name);
  const db = await openDatabase({ location: database.location });
  const store = createStore({ db, clock: systemClock });
  return { database, db, store };
}

beforeAll(async () => {
  oneByOne = await openSide('one.db');
  inSets = await openSide('sets.db');
});
afterAll(async () => {
  for (const side of [oneByOne, inSets]) {
    await side?.db.close();
    await side?.database.drop();
  }
});

const rowsOf = (side: Side) =>
  queryAll(
    side.db,
    `SELECT drift_key, request_id, source, member, problem, expected, received, first_seen_at,
       last_seen_at, count FROM schema_drift ORDER BY drift_key`,
  );

describe('schema_drift written for a batch at once', () => {
  it('ends as recording each record in turn, and reports the same drifts new', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 4 }), async (batches) => {
        for (const side of [oneByOne, inSets]) await execute(side.db, 'DELETE FROM schema_drift');
        for (const records of batches) {
          const one = await oneByOne.store.transaction(async (tx) => {
            const fresh: NewDrift[] = [];
            for (const { requestId, source, drift, at } of records)
              fresh.push(...(await tx.drift.record(requestId, source, drift, at)));
            return fresh;
          });
          const sets = await inSets.store.transaction((tx) => tx.drift.recordMany(records));
          expect(sets).toEqual(one);
        }
        expect(await rowsOf(inSets)).toEqual(await rowsOf(oneByOne));
      }),
      { numRuns: 60 },
    );
  });
});
