import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import type { Drift } from '../../../src/api/contract.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { createStore, type Store, type StoreTx } from '../../../src/db/store.js';
import {
  createRecordBatcher,
  UNWRITTEN_RECORDS,
  type GatherTimer,
} from '../../../src/sync/record-batcher.js';
import type { RecordWrite } from '../../../src/sync/refresh.js';
import {
  countRows,
  createMigratedTestDatabase,
  queryAll,
  type TestDatabase,
} from '../../helpers/engine.js';
import { holdFirstTransaction } from '../../helpers/held-store.js';
import { detailRecord, listFields } from '../../helpers/records.js';

/*
 * The record batcher on either engine: the records of concurrent fetches stored as one set in
 * one transaction, and a record the engine refuses failing alone while the rest of its set is
 * stored.
 */

let database: TestDatabase;
let db: MirrorDb;
let store: Store;
/** Write transactions opened, and request ids whose write the "engine" refuses. */
const seen = { transactions: 0, refused: new Set<string>() };

/** A tx whose request writes refuse the ids in `seen.refused`, as an engine refuses a value. */
function refusing(tx: StoreTx): StoreTx {
  const check = (ids: string[]) => {
    const refused = ids.find((id) => seen.refused.has(id));
    if (refused) throw new Error(`value too long for ${refused}`);
  };
  return {
    ...tx,
    requests: {
      ...tx.requests,
      write: (observation) => {
        check([observation.normalized.content.request_id]);
        return tx.requests.write(observation);
      },
      writeMany: (observations) => {
        check(observations.map((o) => o.normalized.content.request_id));
        return tx.requests.writeMany(observations);
      },
    },
  };
}

beforeEach(async () => {
  database = await createMigratedTestDatabase('batcher.db');
  db = await openDatabase({ location: database.location });
  const real = createStore({ db, clock: systemClock });
  seen.transactions = 0;
  seen.refused.clear();
  store = {
    ...real,
    transaction(work, options) {
      seen.transactions += 1;
      return real.transaction((tx) => work(refusing(tx)), options);
    },
  };
});
afterEach(async () => {
  await db.close();
  await database.drop();
});

const DRIFT: Drift[] = [
  { member: 'extra_member', problem: 'unknown', expected: null, received: 'string' },
];

function recordWrite(id: string, second: number, drift?: Drift[]): RecordWrite {
  const record = detailRecord({ request_id: id });
  return {
    record,
    raw: record,
    list: listFields({ state: 'accepted' }),
    ...(drift && { drift }),
    source: 'poll',
    observedAt: `2026-11-21T09:00:0${second}.000Z`,
  };
}

describe('the record batcher', () => {
  it('stores the records of one turn as one set, each with its own observation time', async () => {
    const batcher = createRecordBatcher(store);
    const written = await Promise.all([
      batcher.store(recordWrite('A1111111', 1)),
      batcher.store(recordWrite('B2222222', 2, DRIFT)),
      batcher.store(recordWrite('C3333333', 3)),
    ]);
    expect(written).toEqual([
      { outcome: 'new', drifted: 0 },
      { outcome: 'new', drifted: 1 },
      { outcome: 'new', drifted: 0 },
    ]);
    expect(seen.transactions).toBe(1);
    const changes = await queryAll<{ request_id: string; observed_at: string }>(
      db,
      'SELECT request_id, observed_at FROM request_changes ORDER BY request_id',
    );
    expect(changes.map((c) => [c.request_id, new Date(c.observed_at).toISOString()])).toEqual([
      ['A1111111', '2026-11-21T09:00:01.000Z'],
      ['B2222222', '2026-11-21T09:00:02.000Z'],
      ['C3333333', '2026-11-21T09:00:03.000Z'],
    ]);
    expect(await countRows(db, 'schema_drift')).toBe(1);
  });

  it('fails a refused record alone: the rest of its set is stored, each in a transaction', async () => {
    const batcher = createRecordBatcher(store);
    seen.refused.add('B2222222');
    const results = await Promise.allSettled([
      batcher.store(recordWrite('A1111111', 1)),
      batcher.store(recordWrite('B2222222', 2)),
      batcher.store(recordWrite('C3333333', 3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({
      message: 'value too long for B2222222',
    });
    // The set, then each record alone.
    expect(seen.transactions).toBe(4);
    const stored = await queryAll<{ request_id: string }>(
      db,
      'SELECT request_id FROM requests ORDER BY request_id',
    );
    expect(stored.map((r) => r.request_id)).toEqual(['A1111111', 'C3333333']);
  });

  it('gathers the records of several turns into one set until the gathering ends', async () => {
    const gathering = manualTimer();
    const batcher = createRecordBatcher(store, { timer: gathering.timer });
    const written = [batcher.store(recordWrite('A1111111', 1))];
    await turn();
    written.push(batcher.store(recordWrite('B2222222', 2)));
    await turn();
    written.push(batcher.store(recordWrite('C3333333', 3)));
    await turn();
    expect(seen.transactions).toBe(0);
    expect(gathering.started).toBe(1);
    gathering.fire();
    await Promise.all(written);
    expect(seen.transactions).toBe(1);
    expect(await countRows(db, 'requests')).toBe(3);
  });

  it('gathers anew what arrives while a set commits, unless it fills a set', async () => {
    const gathering = manualTimer();
    const batcher = createRecordBatcher(store, { maxBatch: 2, timer: gathering.timer });
    const first = batcher.store(recordWrite('A1111111', 1));
    gathering.fire();
    // Queued after the first set has left, while its transaction runs: a full set goes next.
    const full = [
      batcher.store(recordWrite('B2222222', 2)),
      batcher.store(recordWrite('C3333333', 3)),
    ];
    await Promise.all([first, ...full]);
    expect(seen.transactions).toBe(2);
    expect(gathering.started).toBe(1);
    // One alone waits for company.
    const second = batcher.store(recordWrite('D4444444', 4));
    gathering.fire();
    const alone = batcher.store(recordWrite('E5555555', 5));
    await second;
    await turn();
    expect(gathering.started).toBe(3);
    expect(seen.transactions).toBe(3);
    gathering.fire();
    await alone;
    expect(seen.transactions).toBe(4);
    expect(await countRows(db, 'requests')).toBe(5);
  });

  it('stores at once what flushNow finds, and when a set is full', async () => {
    const gathering = manualTimer();
    const batcher = createRecordBatcher(store, { maxBatch: 2, timer: gathering.timer });
    const full = [
      batcher.store(recordWrite('A1111111', 1)),
      batcher.store(recordWrite('B2222222', 2)),
    ];
    await Promise.all(full);
    expect(seen.transactions).toBe(1);
    const last = batcher.store(recordWrite('C3333333', 3));
    await turn();
    expect(seen.transactions).toBe(1);
    batcher.flushNow();
    await last;
    expect(seen.transactions).toBe(2);
    // The full set cancelled its gathering, and flushNow the second: neither fires later.
    expect(gathering.live).toBe(0);
    expect(await countRows(db, 'requests')).toBe(3);
  });

  it('ends the gathering once as many records wait as a cycle may leave unwritten', async () => {
    const gathering = manualTimer();
    const batcher = createRecordBatcher(store, { timer: gathering.timer });
    // A fetch slot waits beyond this many (pool.ts, createTail): gathering on would stall them.
    const ids = Array.from(
      { length: UNWRITTEN_RECORDS },
      (_, i) => `R${String(i).padStart(7, '0')}`,
    );
    await Promise.all(ids.map((id) => batcher.store(recordWrite(id, 1))));
    expect(seen.transactions).toBe(1);
    expect(gathering.live).toBe(0);
    expect(await countRows(db, 'requests')).toBe(UNWRITTEN_RECORDS);
  });

  it('writes the next set while one commits on PostgreSQL, one at a time on SQLite', async () => {
    const held = holdFirstTransaction(store, () => true);
    const batcher = createRecordBatcher(held.store, { maxBatch: 2 });
    const written: Promise<unknown>[] = [];
    try {
      written.push(
        batcher.store(recordWrite('A1111111', 1)),
        batcher.store(recordWrite('B2222222', 2)),
      );
      await turn();
      written.push(
        batcher.store(recordWrite('C3333333', 3)),
        batcher.store(recordWrite('D4444444', 4)),
      );
      // The held set lets go once another starts beside it: on PostgreSQL, the second set.
      if (db.engine === 'postgres') await vi.waitFor(() => expect(held.startedWhileHeld()).toBe(1));
      else {
        await turn();
        await turn();
        expect(held.startedWhileHeld()).toBe(0);
      }
    } finally {
      held.release();
    }
    await Promise.all(written);
    expect(seen.transactions).toBe(2);
    expect(await countRows(db, 'requests')).toBe(4);
  });

  it('writes a set holding a request only once the set before that holds it committed', async () => {
    const held = holdFirstTransaction(store, () => true);
    const batcher = createRecordBatcher(held.store, { maxBatch: 2, setsInFlight: 2 });
    const written: Promise<{ outcome: string }>[] = [];
    try {
      written.push(
        batcher.store(recordWrite('A1111111', 1)),
        batcher.store(recordWrite('B2222222', 2)),
      );
      await turn();
      // B again, edited: planned beside the first set, both would find B absent.
      const edited = detailRecord({ request_id: 'B2222222', patient_first_name: 'Edited' });
      written.push(
        batcher.store({ ...recordWrite('B2222222', 3), record: edited, raw: edited }),
        batcher.store(recordWrite('C3333333', 4)),
      );
      await turn();
      await turn();
      expect(held.startedWhileHeld()).toBe(0);
    } finally {
      held.release();
    }
    const outcomes = (await Promise.all(written)).map((w) => w.outcome);
    expect(outcomes).toEqual(['new', 'new', 'changed', 'new']);
    const changes = await queryAll<{ kind: string }>(
      db,
      "SELECT kind FROM request_changes WHERE request_id = 'B2222222' ORDER BY change_id",
    );
    expect(changes.map((c) => c.kind)).toEqual(['created', 'updated']);
  });
});

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A gathering timer the test ends by hand; it counts the gatherings started and still live. */
function manualTimer() {
  const live = new Set<() => void>();
  let started = 0;
  const timer: GatherTimer = (fire) => {
    started += 1;
    live.add(fire);
    return () => live.delete(fire);
  };
  return {
    timer,
    get started() {
      return started;
    },
    get live() {
      return live.size;
    },
    fire() {
      const fires = [...live];
      live.clear();
      for (const fire of fires) fire();
    },
  };
}
