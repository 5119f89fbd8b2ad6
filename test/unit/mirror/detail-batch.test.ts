import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  AccountRow,
  FacilityRow,
  FieldRow,
  LocationRow,
} from '../../../src/db/schema/index.js';
import {
  planDetailBatch,
  type DetailBatchPlan,
  type SharedRow,
} from '../../../src/mirror/detail-batch.js';
import { receivedDigest } from '../../../src/mirror/digest.js';
import type { StoredRow } from '../../../src/mirror/observations.js';
import { planUnavailable, type ChangeRow } from '../../../src/mirror/request-plan.js';
import {
  BASE_SPEC,
  IDS,
  observationOf,
  oneByOne,
  stepsAndCuts,
  stretchesOf,
  type ObservationSpec,
  type Stretch,
} from '../../helpers/observations.js';

/*
 * A batch of detail observations planned as one: each observation decided by planDetailWrite
 * against the row the batch's earlier ones left, and the results gathered per table. The rules
 * of one observation are request-plan.test.ts's; these pin how a batch threads and gathers them,
 * and, against a model of the tables, that any cut of a sequence into batches ends the same.
 */

const SPEC: ObservationSpec = { ...BASE_SPEC, fieldCount: 0 };
const observe = (spec: Partial<ObservationSpec> = {}) => observationOf({ ...SPEC, ...spec });
const nothingKnown = () => undefined;
/** A requests row as the tables hold it. */
type TableRow = StoredRow & { source: string; raw_json: string };
const storedOf = ({ source: _s, raw_json: _r, ...row }: TableRow): StoredRow => row;
const byId = (...rows: StoredRow[]) => new Map(rows.map((row) => [row.request_id, row]));

/** The row one observation writes into an empty mirror. */
const rowOf = (spec: Partial<ObservationSpec>) =>
  planDetailBatch(new Map(), [observe(spec)], nothingKnown).rows[0]!;

describe('planning a batch of detail observations', () => {
  it('gathers new requests per table, rows and children by id, change rows in order', () => {
    const first = observe({ id: 2 });
    const plan = planDetailBatch(new Map(), [first, observe({ observedAt: 11 })], nothingKnown);
    expect(plan.outcomes).toEqual(['new', 'new']);
    expect(plan.rows.map((row) => row.request_id)).toEqual([IDS[0], IDS[2]]);
    expect(plan.replacedIds).toEqual([IDS[0], IDS[2]]);
    expect(plan.locations.map((l) => [l.request_id, l.role])).toEqual([
      [IDS[0], 'pickup'],
      [IDS[0], 'destination'],
      [IDS[2], 'pickup'],
      [IDS[2], 'destination'],
    ]);
    expect(plan.changes.map((c) => [c.request_id, c.kind])).toEqual([
      [IDS[2], 'created'],
      [IDS[0], 'created'],
    ]);
    // The same account and facility: written once, with the first observation's time.
    expect(plan.accounts).toEqual([
      expect.objectContaining({ account_id: 'ACC1', updated_at: first.observedAt }),
    ]);
    expect(plan.facilities).toEqual([
      expect.objectContaining({ facility_id: 'F1', updated_at: first.observedAt }),
    ]);
    expect(plan.learned.map(([key]) => key)).toEqual(['account:ACC1', 'facility:F1']);
    expect(plan.touched).toEqual([]);
  });

  it('plans a request seen twice against the row its first observation wrote', () => {
    const first = observe();
    const moved = observe({ note: 1, city: 1, hasDestination: false, observedAt: 11 });
    const plan = planDetailBatch(new Map(), [first, moved], nothingKnown);
    expect(plan.outcomes).toEqual(['new', 'changed']);
    expect(plan.rows).toHaveLength(1);
    expect(plan.rows[0]).toMatchObject({
      synced_at: moved.observedAt,
      first_seen_at: first.observedAt,
    });
    // The children are the last observation's: one location, in Evanston.
    expect(plan.locations).toEqual([expect.objectContaining({ role: 'pickup', city: 'Evanston' })]);
    expect(plan.changes.map((c) => c.kind)).toEqual(['created', 'updated']);
    expect(plan.changes[1]!.changed_columns).toBe('raw_json');
  });

  it('finds stale an observation older than one earlier in the batch', () => {
    const plan = planDetailBatch(
      new Map(),
      [observe({ lastUpdated: 2 }), observe({ lastUpdated: 1, note: 1 })],
      nothingKnown,
    );
    expect(plan.outcomes).toEqual(['new', 'stale']);
    expect(plan.changes).toHaveLength(1);
    expect(plan.rows[0]!.last_updated_timestamp_utc).toBe('2026-11-21T08:02:00.000Z');
  });

  it('moves the read time of an unchanged, unsettled row: by itself, or in the row the batch writes', () => {
    const unsettled = storedOf(rowOf({ readDelayMs: 400 }));
    const reread = observe({ readDelayMs: 1_500, observedAt: 11 });
    const plan = planDetailBatch(byId(unsettled), [reread], nothingKnown);
    expect(plan).toMatchObject({
      outcomes: ['unchanged'],
      rows: [],
      touched: [{ request_id: IDS[0], read_at: reread.readAt, received_digest: null }],
      changes: [],
    });
    // Settled by the first re-read, the row takes no earlier read time from the second.
    const twice = planDetailBatch(
      byId(unsettled),
      [reread, observe({ readDelayMs: 900, observedAt: 12 })],
      nothingKnown,
    );
    expect(twice.touched).toEqual([
      { request_id: IDS[0], read_at: reread.readAt, received_digest: null },
    ]);

    const written = planDetailBatch(
      new Map(),
      [observe({ readDelayMs: 400 }), reread],
      nothingKnown,
    );
    expect(written.outcomes).toEqual(['new', 'unchanged']);
    expect(written.touched).toEqual([]);
    expect(written.rows[0]!.read_at).toBe(reread.readAt);
  });

  it('writes no read time for a settled row, nor anything for a stale one', () => {
    const settled = storedOf(rowOf({ lastUpdated: 2 }));
    const plan = planDetailBatch(
      byId(settled),
      [observe({ lastUpdated: 2, observedAt: 11 }), observe({ lastUpdated: 1, note: 2 })],
      nothingKnown,
    );
    expect(plan).toMatchObject({
      outcomes: ['unchanged', 'stale'],
      rows: [],
      touched: [],
      replacedIds: [],
      accounts: [],
      facilities: [],
      learned: [],
      changes: [],
    });
  });

  it('records the digest of the same content sent otherwise, and nothing for a text it holds', () => {
    const settled = storedOf(rowOf({ lastUpdated: 2 }));
    const again = observe({ lastUpdated: 2, observedAt: 11 });
    expect(planDetailBatch(byId(settled), [again], nothingKnown).touched).toEqual([]);

    const reordered = observe({ lastUpdated: 2, observedAt: 11, spelling: 1 });
    const plan = planDetailBatch(byId(settled), [reordered], nothingKnown);
    expect(plan).toMatchObject({ outcomes: ['unchanged'], rows: [], changes: [] });
    expect(plan.touched).toEqual([
      { request_id: IDS[0], read_at: null, received_digest: receivedDigest(reordered.rawJson) },
    ]);
    expect(receivedDigest(reordered.rawJson)).not.toBe(settled.received_digest);
    // The text received first, then the other: the row the batch writes ends with the last.
    const both = planDetailBatch(new Map(), [observe({ lastUpdated: 2 }), reordered], nothingKnown);
    expect(both.outcomes).toEqual(['new', 'unchanged']);
    expect(both.rows[0]!.received_digest).toBe(receivedDigest(reordered.rawJson));
  });

  it('writes an account or facility only when the cache does not hold it so, once per key', () => {
    const first = planDetailBatch(new Map(), [observe()], nothingKnown);
    const known = new Map(first.learned);
    const renamed = observe({ id: 1, accountName: 1, observedAt: 11 });
    const plan = planDetailBatch(new Map(), [observe({ id: 2 }), renamed], (key) => known.get(key));
    expect(plan.accounts).toEqual([
      expect.objectContaining({ name: 'Mercy Health System', updated_at: renamed.observedAt }),
    ]);
    // The facility is named after the account here: renamed too.
    expect(plan.facilities).toEqual([expect.objectContaining({ name: 'Mercy Main 1' })]);
    expect(plan.learned.map(([key]) => key)).toEqual(['account:ACC1', 'facility:F1']);

    const back = planDetailBatch(new Map(), [renamed, observe({ id: 2, observedAt: 12 })], (key) =>
      known.get(key),
    );
    // Renamed, then back as the cache knew it: the last write is the one that counts.
    expect(back.accounts).toEqual([
      expect.objectContaining({
        name: 'Mercy Health',
        updated_at: observe({ observedAt: 12 }).observedAt,
      }),
    ]);
  });

  it('keeps an account’s facilities when a later write in the batch carries none', () => {
    const plan = planDetailBatch(
      new Map(),
      [observe(), observe({ id: 1, hasAccountFacilities: false, accountName: 1 })],
      nothingKnown,
    );
    expect(plan.accounts).toEqual([
      expect.objectContaining({
        name: 'Mercy Health System',
        facilities_json: observe().normalized.account!.facilities_json,
      }),
    ]);
  });
});

/** The tables as the statements of a plan leave them (see request-batch-sql.ts). */
interface Model {
  requests: Map<string, TableRow>;
  locations: Map<string, LocationRow>;
  fields: Map<string, FieldRow>;
  accounts: Map<string, SharedRow<AccountRow>>;
  facilities: Map<string, SharedRow<FacilityRow>>;
  changes: ChangeRow[];
  cache: Map<string, string>;
}

const emptyModel = (): Model => ({
  requests: new Map(),
  locations: new Map(),
  fields: new Map(),
  accounts: new Map(),
  facilities: new Map(),
  changes: [],
  cache: new Map(),
});

function applyPlan(model: Model, plan: DetailBatchPlan): void {
  for (const row of plan.rows) model.requests.set(row.request_id, row);
  for (const { request_id, read_at, received_digest } of plan.touched) {
    const row = model.requests.get(request_id)!;
    model.requests.set(request_id, {
      ...row,
      read_at: read_at ?? row.read_at,
      received_digest: received_digest ?? row.received_digest,
    });
  }
  for (const id of plan.replacedIds) {
    for (const [key, row] of model.locations)
      if (row.request_id === id) model.locations.delete(key);
    for (const [key, row] of model.fields) if (row.request_id === id) model.fields.delete(key);
  }
  for (const row of plan.locations) model.locations.set(`${row.request_id}|${row.role}`, row);
  for (const row of plan.fields)
    model.fields.set(`${row.request_id}|${row.scope}|${row.name}`, row);
  for (const row of plan.accounts) {
    const before = model.accounts.get(row.account_id);
    model.accounts.set(row.account_id, {
      ...row,
      facilities_json: row.facilities_json ?? before?.facilities_json ?? null,
    });
  }
  for (const row of plan.facilities) model.facilities.set(row.facility_id, row);
  model.changes.push(...plan.changes);
  for (const [key, value] of plan.learned) model.cache.set(key, value);
}

/** The model after the stretches, each observation stretch planned as one batch. */
function modelAfter(stretches: readonly Stretch[]) {
  const model = emptyModel();
  const outcomes: unknown[] = [];
  const storedRows = () => new Map([...model.requests].map(([id, row]) => [id, storedOf(row)]));
  for (const stretch of stretches) {
    if (stretch.kind === 'unavailable') {
      const stored = storedRows().get(stretch.id);
      const change = planUnavailable(stored, stretch.at, 'poll');
      outcomes.push(change !== null);
      if (!change) continue;
      model.requests.set(stretch.id, {
        ...model.requests.get(stretch.id)!,
        unavailable_at: stretch.at,
      });
      model.changes.push(change);
      continue;
    }
    const plan = planDetailBatch(storedRows(), stretch.observations, (key) => model.cache.get(key));
    outcomes.push(...plan.outcomes);
    applyPlan(model, plan);
  }
  const sorted = <T>(map: Map<string, T>) => [...map].sort(([a], [b]) => (a < b ? -1 : 1));
  return {
    outcomes,
    tables: {
      requests: sorted(model.requests),
      locations: sorted(model.locations),
      fields: sorted(model.fields),
      accounts: sorted(model.accounts),
      facilities: sorted(model.facilities),
      changes: model.changes,
    },
  };
}

describe('any cut of a sequence into batches', () => {
  it('ends with the tables and outcomes of planning one observation at a time', () => {
    fc.assert(
      fc.property(stepsAndCuts, ({ steps, cuts }) => {
        expect(modelAfter(stretchesOf(steps, cuts))).toEqual(modelAfter(oneByOne(steps)));
      }),
      { numRuns: 200 },
    );
  });
});
