import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import type { RequestWrite, WriteOutcome } from '../../../src/mirror/observations.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import type { Connection, RowsInsert, Sql } from '../../../src/db/sql.js';
import { createStore, type Store } from '../../../src/db/store.js';
import { REQUEST_SET_SQL } from '../../../src/db/store/request-batch-sql.js';
import { requestSql, ROW_INSERTS } from '../../../src/db/store/request-sql.js';
import { shapesFor } from '../../../src/db/sqlite/insert-shapes.js';
import {
  createMigratedTestDatabase,
  execute,
  queryAll,
  testEngine,
  type TestDatabase,
} from '../../helpers/engine.js';
import {
  BASE_SPEC,
  IDS,
  observationOf,
  oneByOne,
  stepsAndCuts,
  stretchesOf,
  type ObservationSpec,
  type Step,
  type Stretch,
} from '../../helpers/observations.js';

/*
 * requests.writeMany against requests.write one at a time, on either engine: the same tables
 * (requests, locations, fields, accounts, facilities, the change log) and the same outcomes,
 * whatever the batch holds and however a sequence is cut into batches; and a statement count
 * per batch that does not grow with the batch.
 */

interface Mirror {
  database: TestDatabase;
  db: MirrorDb;
  /** Statements run in write transactions since the last reset. */
  statements: string[];
}

/** `sql`, recording each statement's text into `into`. */
function recording(sql: Sql, into: string[]): Sql {
  return {
    dialect: sql.dialect,
    all: (text, params) => (into.push(text), sql.all(text, params)),
    get: (text, params) => (into.push(text), sql.get(text, params)),
    run: (text, params) => (into.push(text), sql.run(text, params)),
    insertRows: (rowsInto, rows) => {
      const { wide, one } =
        sql.dialect.engine === 'sqlite' ? shapesFor(rows.length) : { wide: 0, one: rows.length };
      for (let i = 0; i < wide; i += 1) into.push(`INSERT INTO ${rowsInto.table} (wide)`);
      for (let i = 0; i < one; i += 1) into.push(`INSERT INTO ${rowsInto.table} (one)`);
      return sql.insertRows(rowsInto, rows);
    },
  };
}

async function openMirror(name: string): Promise<Mirror> {
  const database = await createMigratedTestDatabase(name);
  const db = await openDatabase({ location: database.location });
  return { database, db, statements: [] };
}

/**
 * `sql`, running the upserts where the store picks an UPDATE that names no indexed column
 * (keepsIndexedColumns): what the store wrote before it picked them.
 */
function upsertsOnly(sql: Sql): Sql {
  const q = requestSql(sql.dialect);
  const upsertFor = new Map([
    [q.updateKeepingIndexed, q.upsertRequest],
    [q.updatePartialKeepingIndexed, q.upsertPartial],
  ]);
  return { ...sql, run: (text, params) => sql.run(upsertFor.get(text) ?? text, params) };
}

/**
 * A store of its own (a cold written cache) whose transactions record their statements; with
 * `isUpsertOnly`, it runs the upserts in place of the narrow UPDATEs.
 */
function storeOf(mirror: Mirror, isUpsertOnly = false): Store {
  const watched: Connection = {
    ...mirror.db,
    transaction: (work) =>
      mirror.db.transaction((sql) => {
        const recorded = recording(sql, mirror.statements);
        return work(isUpsertOnly ? upsertsOnly(recorded) : recorded);
      }),
  };
  return createStore({ db: watched, clock: systemClock });
}

const TABLES = [
  'requests',
  'request_locations',
  'request_fields',
  'accounts',
  'facilities',
  'request_changes',
  'quarantine',
] as const;

async function emptied(mirror: Mirror): Promise<void> {
  await mirror.db.transaction(async (sql) => {
    for (const table of [...TABLES].reverse()) await sql.run(`DELETE FROM ${table}`);
  });
  mirror.statements.length = 0;
}

type Row = Record<string, unknown>;

/** Every row of the request tables, in a fixed order (the change log in its own). */
function tablesOf(mirror: Mirror) {
  return mirror.db.read(async (sql) => ({
    requests: await sql.all<Row>('SELECT * FROM requests ORDER BY request_id'),
    locations: await sql.all<Row>('SELECT * FROM request_locations ORDER BY request_id, role'),
    fields: await sql.all<Row>('SELECT * FROM request_fields ORDER BY request_id, scope, name'),
    accounts: await sql.all<Row>('SELECT * FROM accounts ORDER BY account_id'),
    facilities: await sql.all<Row>('SELECT * FROM facilities ORDER BY facility_id'),
    changes: await sql.all<Row>(
      `SELECT request_id, observed_at, kind, source, changed_columns, old_state, new_state,
         old_values_json, new_values_json FROM request_changes ORDER BY change_id`,
    ),
  }));
}

/**
 * Applies the stretches, each in a transaction of its own: observations with writeMany
 * (`isBatched`) or write one by one, marks with markUnavailable. The outcomes, in order.
 */
async function apply(
  store: Store,
  stretches: readonly Stretch[],
  isBatched: boolean,
): Promise<(WriteOutcome | boolean)[]> {
  const outcomes: (WriteOutcome | boolean)[] = [];
  for (const stretch of stretches) {
    outcomes.push(
      ...(await store.transaction(async (tx) => {
        if (stretch.kind === 'unavailable')
          return [await tx.requests.markUnavailable(stretch.id, stretch.at, 'poll')];
        if (isBatched) return tx.requests.writeMany(stretch.observations);
        const each: WriteOutcome[] = [];
        for (const observation of stretch.observations)
          each.push(await tx.requests.write(observation));
        return each;
      })),
    );
  }
  return outcomes;
}

/** Makes the engine refuse any location in Evanston (a trigger), as it refuses a bad value. */
async function refuseEvanston(db: MirrorDb): Promise<void> {
  if (db.engine === 'sqlite') {
    await execute(
      db,
      `CREATE TRIGGER refuse_evanston BEFORE INSERT ON request_locations
       WHEN NEW.city = 'Evanston' BEGIN SELECT RAISE(ABORT, 'Evanston refused'); END`,
    );
    return;
  }
  await execute(
    db,
    `CREATE FUNCTION refuse_evanston() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN IF NEW.city = 'Evanston' THEN RAISE EXCEPTION 'Evanston refused'; END IF; RETURN NEW; END $$`,
  );
  await execute(
    db,
    `CREATE TRIGGER refuse_evanston BEFORE INSERT ON request_locations
     FOR EACH ROW EXECUTE FUNCTION refuse_evanston()`,
  );
}

async function allowEvanston(db: MirrorDb): Promise<void> {
  if (db.engine === 'sqlite') {
    await execute(db, 'DROP TRIGGER refuse_evanston');
    return;
  }
  await execute(db, 'DROP TRIGGER refuse_evanston ON request_locations');
  await execute(db, 'DROP FUNCTION refuse_evanston()');
}

/** The observation, of request `id` instead. */
function withId(observation: RequestWrite, id: string): RequestWrite {
  const relabel = <T extends { request_id: string }>(rows: T[]) =>
    rows.map((row) => ({ ...row, request_id: id }));
  const { normalized } = observation;
  return {
    ...observation,
    normalized: {
      ...normalized,
      content: { ...normalized.content, request_id: id },
      locations: relabel(normalized.locations),
      fields: relabel(normalized.fields),
    },
  };
}

let single: Mirror;
let batched: Mirror;

beforeAll(async () => {
  single = await openMirror('single.db');
  batched = await openMirror('batched.db');
});
afterAll(async () => {
  for (const mirror of [single, batched]) {
    await mirror.db.close();
    await mirror.database.drop();
  }
});
beforeEach(async () => {
  await emptied(single);
  await emptied(batched);
});

/**
 * Both mirrors after `steps`: one by one (with the upserts alone, `isUpsertOnly`), and cut into
 * batches by `cuts`.
 */
async function compare(
  steps: readonly Step[],
  cuts: readonly boolean[] = [],
  isUpsertOnly = false,
) {
  const oneAtATime = await apply(storeOf(single, isUpsertOnly), oneByOne(steps), false);
  const inBatches = await apply(storeOf(batched), stretchesOf(steps, cuts), true);
  return {
    outcomes: { oneAtATime, inBatches },
    tables: { oneAtATime: await tablesOf(single), inBatches: await tablesOf(batched) },
  };
}

const SPEC = BASE_SPEC;
const observe = (spec: Partial<ObservationSpec>): Step => ({
  kind: 'observe',
  spec: { ...SPEC, ...spec },
});

describe('writing detail observations in a batch', () => {
  it('leaves the tables as writing them one at a time: duplicates, stale, re-reads, moved children', async () => {
    const steps: Step[] = [
      // Stored before the batch: A and C, C then marked unavailable.
      observe({ id: 0 }),
      observe({ id: 2, lastUpdated: 0, readDelayMs: 400 }),
      { kind: 'unavailable', id: 2, at: 11 },
      // The batch.
      observe({ id: 0, note: 1, observedAt: 12, lastUpdated: 2 }), // A changed: children replaced
      observe({ id: 0, note: 1, observedAt: 12, lastUpdated: 1 }), // A stale within the batch
      observe({ id: 1, observedAt: 12 }), // B new
      // B's children moved; read within the second of its last_updated: unsettled.
      observe({ id: 1, observedAt: 13, city: 1, hasDestination: false, readDelayMs: 400 }),
      // B re-read: its read time moves; then an earlier read: settled now, it stays.
      observe({ id: 1, observedAt: 13, city: 1, hasDestination: false, readDelayMs: 1_500 }),
      observe({ id: 1, observedAt: 13, city: 1, hasDestination: false, readDelayMs: 900 }),
      observe({ id: 2, lastUpdated: 0, readDelayMs: 900, observedAt: 13 }), // C available again
      observe({ id: 2, lastUpdated: null, state: null, observedAt: 14, accountName: 1 }),
      observe({ id: 0, note: 1, lastUpdated: 2, hasAccountFacilities: false, observedAt: 14 }),
      // A again, the same record: unchanged, settled (no read time written).
      observe({ id: 0, note: 1, lastUpdated: 2, hasAccountFacilities: false, observedAt: 15 }),
    ];
    const { outcomes, tables } = await compare(steps);
    expect(outcomes.inBatches).toEqual(outcomes.oneAtATime);
    expect(outcomes.inBatches.slice(3)).toEqual([
      'changed',
      'stale',
      'new',
      'changed',
      'unchanged',
      'unchanged',
      'changed',
      'changed',
      'changed',
      'unchanged',
    ]);
    expect(tables.inBatches).toEqual(tables.oneAtATime);
    expect(tables.inBatches.changes.map((c) => c.kind)).toContain('available');
    expect(tables.inBatches.locations.filter((l) => l.request_id === 'B2222222')).toHaveLength(1);
  });

  it('keeps an account’s facilities when a later write in the batch carries none', async () => {
    const { tables } = await compare([
      observe({ id: 0, hasAccountFacilities: true, accountName: 0 }),
      observe({ id: 1, hasAccountFacilities: false, accountName: 1, observedAt: 11 }),
    ]);
    expect(tables.inBatches).toEqual(tables.oneAtATime);
    expect(tables.inBatches.accounts).toEqual([
      expect.objectContaining({ name: 'Mercy Health System', facilities_json: expect.any(String) }),
    ]);
  });

  it('runs a number of statements per batch that does not grow with it on PostgreSQL, and never falls back', async () => {
    const store = storeOf(batched);
    const counts: number[] = [];
    const texts = new Set<string>();
    const sizes = [3, 30, 120];
    let childRows = { locations: 0, fields: 0 };
    for (const [batch, size] of sizes.entries()) {
      const observations = Array.from({ length: size }, (_, i) =>
        withId(observationOf({ ...SPEC, observedAt: 10 + batch }), `N${batch}${i}`),
      );
      const { locations, fields } = observations[0]!.normalized;
      childRows = { locations: locations.length, fields: fields.length };
      batched.statements.length = 0;
      const outcomes = await store.transaction((tx) => tx.requests.writeMany(observations));
      expect(outcomes).toEqual(observations.map(() => 'new'));
      counts.push(batched.statements.length);
      for (const text of batched.statements) texts.add(text);
    }
    // The read, a savepoint and its release; the account and facility in the first batch only
    // (then the cache knows them).
    if (testEngine() === 'postgres') {
      // One statement per table: requests, locations, fields (no deletes of child rows: the
      // upsert inserted every request); then, before COMMIT, the lock under which the change
      // log takes its positions, and the change log (change-log.ts).
      expect(counts).toEqual([10, 8, 8]);
    } else {
      // In-process: the requests, locations, fields and change-log rows several to a
      // statement (see sqlite/insert-shapes.ts).
      const statementsOf = (rows: number) => shapesFor(rows).wide + shapesFor(rows).one;
      expect(counts).toEqual(
        sizes.map(
          (size, i) =>
            3 +
            statementsOf(size) +
            statementsOf(size * childRows.locations) +
            statementsOf(size * childRows.fields) +
            statementsOf(size) +
            (i === 0 ? 2 : 0),
        ),
      );
    }
    // The same few texts whatever the size: each statement is prepared once. On SQLite each of
    // the four inserted tables has two shapes.
    expect(texts.size).toBe(testEngine() === 'postgres' ? 10 : 13);
    expect(await queryAll(batched.db, 'SELECT 1 FROM requests')).toHaveLength(153);
  });

  it('falls back to one write at a time when the engine refuses the batch, and the one at fault fails alone', async () => {
    await refuseEvanston(batched.db);
    try {
      const store = storeOf(batched);
      const observations = [0, 1, 2].map((id) =>
        observationOf({ ...SPEC, id, city: id === 1 ? 1 : 0 }),
      );
      const thrown = await store.transaction(async (tx) => {
        const error = await tx.requests.writeMany(observations).catch((e: unknown) => e);
        // What the transaction holds afterwards is committed, to be looked at.
        return error;
      });
      expect(String(thrown)).toMatch(/Evanston refused/);
      const tables = await tablesOf(batched);
      // The first was written on its own; the second's writes were rolled back, and the third
      // was not reached.
      expect(tables.requests.map((r) => r.request_id)).toEqual(['A1111111']);
      expect(tables.locations.map((l) => l.request_id)).toEqual(['A1111111', 'A1111111']);
      expect(tables.changes.map((c) => c.request_id)).toEqual(['A1111111']);
      const savepoints = batched.statements.filter((text) => text.startsWith('SAVEPOINT'));
      expect(savepoints).toHaveLength(1 + 2);
    } finally {
      await allowEvanston(batched.db);
    }
  });

  it('leaves a write conflict to the caller: the transaction runs again, not one write at a time', async () => {
    // The batch's upsert of its requests rows: one statement on PostgreSQL, rows several to a
    // statement on SQLite.
    const upsert =
      batched.db.engine === 'postgres' ? REQUEST_SET_SQL.upsertRequests : ROW_INSERTS.requests;
    let isConflictDue = true;
    const conflicting: Connection = {
      ...batched.db,
      transaction: (work) =>
        batched.db.transaction((sql) => {
          const recorded = recording(sql, batched.statements);
          /** Fails the batch's upsert once, as PostgreSQL fails a deadlock's loser. */
          const losing = (statement: string | RowsInsert) => {
            if (statement !== upsert || !isConflictDue) return false;
            isConflictDue = false;
            return true;
          };
          const deadlock = () =>
            Promise.reject(Object.assign(new Error('deadlock detected'), { code: '40P01' }));
          return work({
            ...recorded,
            all: (text, params) => (losing(text) ? deadlock() : recorded.all(text, params)),
            run: (text, params) => (losing(text) ? deadlock() : recorded.run(text, params)),
            insertRows: (into, rows) =>
              losing(into) ? deadlock() : recorded.insertRows(into, rows),
          });
        }),
    };
    const store = createStore({ db: conflicting, clock: systemClock });
    const observations = [0, 1].map((id) => observationOf({ ...SPEC, id }));
    expect(await store.transaction((tx) => tx.requests.writeMany(observations))).toEqual([
      'new',
      'new',
    ]);
    expect(isConflictDue).toBe(false);
    // Two attempts of the batch (a savepoint each), none of one write at a time.
    expect(batched.statements.filter((text) => text.startsWith('SAVEPOINT'))).toHaveLength(2);
    expect((await tablesOf(batched)).requests).toHaveLength(2);
  });

  it.skipIf(testEngine() !== 'postgres')(
    'replaces the child rows of a request another transaction stored after the batch read it',
    async () => {
      const other = await openDatabase({ location: batched.database.location });
      try {
        const elsewhere = createStore({ db: other, clock: systemClock });
        let isOtherDue = true;
        const interleaved: Connection = {
          ...batched.db,
          transaction: (work) =>
            batched.db.transaction((sql) => {
              const recorded = recording(sql, batched.statements);
              return work({
                ...recorded,
                async all(text, params) {
                  if (text === REQUEST_SET_SQL.upsertRequests && isOtherDue) {
                    // Between this batch's read and its upsert: A stored, with two locations.
                    isOtherDue = false;
                    await elsewhere.transaction((tx) =>
                      tx.requests.write(observationOf({ ...SPEC, observedAt: 9 })),
                    );
                  }
                  return recorded.all(text, params);
                },
              });
            }),
        };
        const store = createStore({ db: interleaved, clock: systemClock });
        const moved = observationOf({ ...SPEC, city: 1, hasDestination: false });
        const outcomes = await store.transaction((tx) =>
          tx.requests.writeMany([moved, observationOf({ ...SPEC, id: 1 })]),
        );
        // Planned against no stored row: new, as one write at a time would have it then.
        expect(outcomes).toEqual(['new', 'new']);
        expect(isOtherDue).toBe(false);
        const locations = (await tablesOf(batched)).locations.filter(
          (row) => row.request_id === IDS[0],
        );
        expect(locations).toEqual([expect.objectContaining({ role: 'pickup', city: 'Evanston' })]);
        // Written as one batch: the other's locations deleted, none refused by the engine.
        const savepoints = batched.statements.filter((text) => text.startsWith('SAVEPOINT'));
        expect(savepoints).toHaveLength(1);
      } finally {
        await other.close();
      }
    },
  );

  it('gives the same tables as one at a time for any sequence cut into batches anyhow', async () => {
    await fc.assert(
      fc.asyncProperty(stepsAndCuts, async ({ steps, cuts }) => {
        await emptied(single);
        await emptied(batched);
        const { outcomes, tables } = await compare(steps, cuts);
        expect(outcomes.inBatches).toEqual(outcomes.oneAtATime);
        expect(tables.inBatches).toEqual(tables.oneAtATime);
        // Written as batches, none fell back to one write at a time (a savepoint each).
        const batches = stretchesOf(steps, cuts).filter((s) => s.kind === 'observe').length;
        const savepoints = batched.statements.filter((text) => text.startsWith('SAVEPOINT'));
        expect(savepoints.length).toBeLessThanOrEqual(batches);
      }),
      { numRuns: testEngine() === 'postgres' ? 40 : 100 },
    );
  });

  it('writes with its narrow UPDATEs the tables the upserts alone would, for any sequence', async () => {
    let narrow = 0;
    const q = requestSql(batched.db.dialect);
    await fc.assert(
      fc.asyncProperty(stepsAndCuts, async ({ steps, cuts }) => {
        await emptied(single);
        await emptied(batched);
        const { outcomes, tables } = await compare(steps, cuts, true);
        expect(outcomes.inBatches).toEqual(outcomes.oneAtATime);
        expect(tables.inBatches).toEqual(tables.oneAtATime);
        narrow += batched.statements.filter((text) => text === q.updateKeepingIndexed).length;
      }),
      { numRuns: testEngine() === 'postgres' ? 20 : 100 },
    );
    // SQLite picks them where an edit keeps the indexed columns; PostgreSQL decides by value.
    if (testEngine() === 'sqlite') expect(narrow).toBeGreaterThan(0);
    else expect(narrow).toBe(0);
  });
});
