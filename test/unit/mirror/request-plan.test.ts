import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CONTENT_COLUMNS, type LocationRow } from '../../../src/db/schema/index.js';
import { receivedDigest } from '../../../src/mirror/digest.js';
import type {
  PartialRequestWrite,
  RequestWrite,
  StoredRow,
  WriteSource,
} from '../../../src/mirror/observations.js';
import {
  planDetailWrite,
  planPartialWrite,
  planUnavailable,
  type DetailPlan,
  type PartialPlan,
} from '../../../src/mirror/request-plan.js';
import { normalizeDetail, type ListFields } from '../../../src/sync/normalize.js';
import { isoFromMs } from '../../../src/time.js';
import { detailRecord, listFields } from '../../helpers/records.js';

/*
 * What one observation of a request does to the mirror, decided without a database: the row
 * written, whether the child rows are replaced, the change-log row, or nothing (stale,
 * unchanged). The rules the plans are made of have their own tests (rules.test.ts,
 * settled.test.ts); these pin how the plans combine them.
 */

type DetailRecord = ReturnType<typeof detailRecord>;

const LAST_UPDATED = '2026-11-21T08:00:00.000Z';
/** When the stored row was polled: a second and more after LAST_UPDATED, so it is settled. */
const POLLED_AT = '2026-11-21T09:00:00.000Z';
const WEBHOOK_AT = '2026-11-21T10:00:00.000Z';
const MARKED_AT = '2026-11-21T12:00:00.000Z';

/** detailRecord() with listFields() as normalized, in the order of CONTENT_COLUMNS. */
const CONTENT = {
  request_id: 'K3J9QX2A',
  list_state: 'accepted',
  request_current_state: 'accepted',
  patient_first_name: 'Seán',
  patient_last_name: "O'Brien",
  patient_dob: '1948-02-29',
  transport_pickup_time: '2026-11-22T14:00:00.000Z',
  transport_agreed_for_time: '2026-11-22T14:30:00.000Z',
  service_level_type: 'BLS',
  service_type: 'Ambulance',
  account_id: 'ACC1',
  facility_id: 'F1',
  user_first_name: 'Dana',
  user_last_name: 'Reyes',
  user_email: 'dana@provider.example',
  is_round_trip_first_trip: 1,
  is_round_trip_return_trip: 0,
  collection_id: 'COL1',
  created_timestamp_utc: '2026-11-20T08:00:00.000Z',
  event_dt_utc: '2026-11-22T14:30:00.000Z',
  last_updated_timestamp_utc: LAST_UPDATED,
};
const { request_id: ID, ...CONTENT_VALUES } = CONTENT;

/** Columns a webhook never carries (see normalize-webhook.ts). */
const NEVER_CARRIED = [
  'facility_id',
  'created_timestamp_utc',
  'last_updated_timestamp_utc',
] as const satisfies PartialRequestWrite['unknownColumns'];

const hashOf = (record: DetailRecord, list?: ListFields) =>
  normalizeDetail(record, list).contentHash;

/** A detail observation, as a poll makes one. */
function detailObservation({
  record = detailRecord(),
  list = listFields(),
  observedAt = POLLED_AT,
  readAt,
  source = 'poll',
}: {
  record?: DetailRecord;
  list?: ListFields;
  observedAt?: string;
  readAt?: string;
  source?: WriteSource;
} = {}): RequestWrite {
  return {
    normalized: normalizeDetail(record, list),
    rawJson: JSON.stringify(record),
    source,
    observedAt,
    ...(readAt !== undefined && { readAt }),
  };
}

/** The row a detail plan stores, as the store reads it back. */
function storedFrom(plan: DetailPlan, overrides: Partial<StoredRow> = {}): StoredRow {
  if (plan.outcome !== 'new' && plan.outcome !== 'changed') {
    throw new Error(`a ${plan.outcome} plan stores no row`);
  }
  const { source: _source, raw_json: _rawJson, ...row } = plan.row;
  return { ...row, ...overrides };
}

/** The row stored by polling `observation` (default: detailRecord() at POLLED_AT), with overrides. */
function polled(overrides: Partial<StoredRow> = {}, observation = detailObservation()): StoredRow {
  return storedFrom(planDetailWrite(undefined, observation), overrides);
}

/** The locations stored with detailRecord(), ids included. */
const STORED_LOCATIONS = normalizeDetail(detailRecord()).locations;

/**
 * A webhook-like observation of `record`: no list fields, locations without ids, and the columns
 * a webhook never carries left unknown.
 */
function partialObservation({
  record = detailRecord(),
  observedAt = WEBHOOK_AT,
  content = {},
  unknownColumns = NEVER_CARRIED,
  locations,
}: {
  record?: DetailRecord;
  observedAt?: string;
  content?: Partial<PartialRequestWrite['content']>;
  unknownColumns?: PartialRequestWrite['unknownColumns'];
  locations?: LocationRow[];
} = {}): PartialRequestWrite {
  const normalized = normalizeDetail(record);
  return {
    content: {
      ...normalized.content,
      facility_id: null,
      created_timestamp_utc: null,
      last_updated_timestamp_utc: null,
      ...content,
    },
    unknownColumns,
    locations:
      locations ?? normalized.locations.map((location) => ({ ...location, location_id: null })),
    account: null,
    rawJson: JSON.stringify({ data: record }),
    source: 'webhook',
    observedAt,
  };
}

const json = (values: object) => JSON.stringify(values);

describe('planDetailWrite', () => {
  it('stores a new request whole: every content column in a created change, children written', () => {
    expect(planDetailWrite(undefined, detailObservation())).toEqual({
      outcome: 'new',
      row: {
        ...CONTENT,
        unavailable_at: null,
        synced_at: POLLED_AT,
        read_at: POLLED_AT,
        first_seen_at: POLLED_AT,
        source: 'poll',
        content_hash: hashOf(detailRecord(), listFields()),
        raw_json: JSON.stringify(detailRecord()),
        received_digest: receivedDigest(JSON.stringify(detailRecord())),
      },
      isChildrenReplaced: true,
      change: {
        request_id: ID,
        observed_at: POLLED_AT,
        kind: 'created',
        source: 'poll',
        changed_columns: CONTENT_COLUMNS.join(','),
        old_state: null,
        new_state: 'accepted',
        old_values_json: null,
        new_values_json: json(CONTENT_VALUES),
      },
    });
  });

  it('stores the read time and source given', () => {
    const readAt = '2026-11-21T08:59:58.000Z';
    const plan = planDetailWrite(undefined, detailObservation({ readAt, source: 'backfill' }));
    expect(plan).toMatchObject({
      row: { read_at: readAt, synced_at: POLLED_AT, source: 'backfill' },
      change: { source: 'backfill', observed_at: POLLED_AT },
    });
  });

  describe('orders observations by last_updated when both have one', () => {
    it.each([
      [
        'an older last_updated observed later',
        'stale',
        '2026-11-21T07:59:59Z',
        '2026-11-21T13:00:00.000Z',
      ],
      [
        'the same last_updated observed earlier',
        'unchanged',
        LAST_UPDATED,
        '2026-11-21T08:30:00.000Z',
      ],
      [
        'a newer last_updated observed earlier',
        'changed',
        '2026-11-21T08:00:01Z',
        '2026-11-21T08:30:00.000Z',
      ],
    ])('%s: %s', (_case, outcome, lastUpdated, observedAt) => {
      const observation = detailObservation({
        list: listFields({ last_updated_timestamp_utc: lastUpdated }),
        observedAt,
      });
      expect(planDetailWrite(polled(), observation).outcome).toBe(outcome);
    });
  });

  describe('orders observations by observedAt when either lacks last_updated', () => {
    const withoutLastUpdated = listFields({ last_updated_timestamp_utc: undefined });
    const storedWithout = () => polled({}, detailObservation({ list: withoutLastUpdated }));
    it.each([
      [
        'neither has one, observed a millisecond before',
        'stale',
        storedWithout,
        withoutLastUpdated,
        '2026-11-21T08:59:59.999Z',
      ],
      [
        'neither has one, observed at the same time',
        'unchanged',
        storedWithout,
        withoutLastUpdated,
        POLLED_AT,
      ],
      [
        'only the stored row has one, observed before',
        'stale',
        () => polled(),
        withoutLastUpdated,
        '2026-11-21T08:59:59.999Z',
      ],
      [
        'only the stored row has one, observed after',
        'unchanged',
        () => polled(),
        withoutLastUpdated,
        '2026-11-21T09:00:00.001Z',
      ],
      [
        'only the observation has one (newer), observed before',
        'stale',
        storedWithout,
        listFields(),
        '2026-11-21T08:59:59.999Z',
      ],
      [
        'only the observation has one, observed after',
        'changed',
        storedWithout,
        listFields(),
        '2026-11-21T09:00:00.001Z',
      ],
    ])('%s: %s', (_case, outcome, stored, list, observedAt) => {
      const plan = planDetailWrite(stored(), detailObservation({ list, observedAt }));
      expect(plan.outcome).toBe(outcome);
    });
  });

  it('keeps the stored list state, created and last_updated when the observation lacks them', () => {
    // A detail read without list fields, whose state is not one a list reports.
    const record = detailRecord({ request_current_state: 'en_route', collection_id: null });
    const plan = planDetailWrite(
      polled(),
      detailObservation({ record, list: {}, observedAt: WEBHOOK_AT }),
    );
    expect(plan).toEqual({
      outcome: 'changed',
      row: {
        ...CONTENT,
        request_current_state: 'en_route',
        // Not one of the columns kept when unknown: the observation's null is the value.
        collection_id: null,
        unavailable_at: null,
        synced_at: WEBHOOK_AT,
        read_at: WEBHOOK_AT,
        first_seen_at: POLLED_AT,
        source: 'poll',
        content_hash: hashOf(record),
        raw_json: JSON.stringify(record),
        received_digest: receivedDigest(JSON.stringify(record)),
      },
      isChildrenReplaced: true,
      change: {
        request_id: ID,
        observed_at: WEBHOOK_AT,
        kind: 'updated',
        source: 'poll',
        changed_columns: 'request_current_state,collection_id',
        old_state: 'accepted',
        new_state: 'accepted',
        old_values_json: json({ request_current_state: 'accepted', collection_id: 'COL1' }),
        new_values_json: json({ request_current_state: 'en_route', collection_id: null }),
      },
    });
  });

  it('records the digest of the same content sent otherwise (members reordered), and nothing more', () => {
    const record = detailRecord();
    const reordered = Object.fromEntries(Object.entries(record).reverse()) as typeof record;
    const observation = detailObservation({ record: reordered, observedAt: WEBHOOK_AT });
    expect(observation.rawJson).not.toBe(JSON.stringify(record));
    expect(planDetailWrite(polled(), observation)).toEqual({
      outcome: 'unchanged',
      readAt: null,
      receivedDigest: receivedDigest(observation.rawJson),
    });
  });

  it('finds nothing new in a full-list record that lacks only the list fields', () => {
    const observation = detailObservation({ list: { state: 'accepted' }, observedAt: WEBHOOK_AT });
    expect(planDetailWrite(polled(), observation)).toEqual({
      outcome: 'unchanged',
      readAt: null,
      receivedDigest: null,
    });
  });

  describe('unchanged: the read time to store', () => {
    /** Read 0.4 s after last_updated: an edit later within that second may be missing. */
    const unsettled = (overrides: Partial<StoredRow> = {}) =>
      polled(overrides, detailObservation({ observedAt: '2026-11-21T08:00:00.400Z' }));
    const at = (readAt: string | undefined, observedAt = '2026-11-21T08:00:02.000Z') =>
      detailObservation({ observedAt, readAt });

    it.each([
      [
        'a later read of an unsettled row',
        '2026-11-21T08:00:01.200Z',
        unsettled,
        at('2026-11-21T08:00:01.200Z'),
      ],
      [
        'an unsettled row, no read time given: the observation time',
        '2026-11-21T08:00:02.000Z',
        unsettled,
        at(undefined),
      ],
      [
        'an unsettled row never read',
        '2026-11-21T08:00:00.100Z',
        () => unsettled({ read_at: null }),
        at('2026-11-21T08:00:00.100Z'),
      ],
      ['an earlier read of an unsettled row', null, unsettled, at('2026-11-21T08:00:00.300Z')],
      ['the same read of an unsettled row', null, unsettled, at('2026-11-21T08:00:00.400Z')],
      [
        'a later read of a settled row',
        null,
        () => polled(),
        at('2026-11-21T09:30:00.000Z', '2026-11-21T09:30:00.000Z'),
      ],
    ])('%s: read time %s', (_case, readAt, stored, observation) => {
      expect(planDetailWrite(stored(), observation)).toEqual({
        outcome: 'unchanged',
        readAt,
        receivedDigest: null,
      });
    });

    it('stores none for a row without last_updated, never read: nothing a list could hide', () => {
      const list = listFields({ last_updated_timestamp_utc: undefined });
      const stored = polled({ read_at: null }, detailObservation({ list }));
      const observation = detailObservation({ list, observedAt: WEBHOOK_AT });
      expect(planDetailWrite(stored, observation)).toEqual({
        outcome: 'unchanged',
        readAt: null,
        receivedDigest: null,
      });
    });
  });

  it('records a change of unmapped members only as raw_json, and replaces the children', () => {
    const record = detailRecord({
      enabled_request_fields: { o2_lpm: '4', notes: 'Stairs at entrance' },
    });
    const plan = planDetailWrite(polled(), detailObservation({ record, observedAt: WEBHOOK_AT }));
    expect(plan).toEqual({
      outcome: 'changed',
      row: {
        ...CONTENT,
        unavailable_at: null,
        synced_at: WEBHOOK_AT,
        read_at: WEBHOOK_AT,
        first_seen_at: POLLED_AT,
        source: 'poll',
        content_hash: hashOf(record),
        raw_json: JSON.stringify(record),
        received_digest: receivedDigest(JSON.stringify(record)),
      },
      isChildrenReplaced: true,
      change: {
        request_id: ID,
        observed_at: WEBHOOK_AT,
        kind: 'updated',
        source: 'poll',
        changed_columns: 'raw_json',
        old_state: 'accepted',
        new_state: 'accepted',
        // The stored row is read without its raw_json: the log names the column only.
        old_values_json: json({ raw_json: null }),
        new_values_json: json({ raw_json: null }),
      },
    });
  });

  it('lists exactly the changed columns with their old and new values, keeping first_seen_at', () => {
    const record = detailRecord({ patient_last_name: 'OBrien', service_level_type: 'ALS' });
    const list = listFields({ last_updated_timestamp_utc: '2026-11-21T10:00:00Z' });
    const stored = polled({ first_seen_at: '2026-11-01T00:00:00.000Z' });
    const observedAt = '2026-11-21T10:00:05.000Z';
    const readAt = '2026-11-21T10:00:04.000Z';
    expect(
      planDetailWrite(stored, detailObservation({ record, list, observedAt, readAt })),
    ).toEqual({
      outcome: 'changed',
      row: {
        ...CONTENT,
        patient_last_name: 'OBrien',
        service_level_type: 'ALS',
        last_updated_timestamp_utc: '2026-11-21T10:00:00.000Z',
        unavailable_at: null,
        synced_at: observedAt,
        read_at: readAt,
        first_seen_at: '2026-11-01T00:00:00.000Z',
        source: 'poll',
        content_hash: hashOf(record),
        raw_json: JSON.stringify(record),
        received_digest: receivedDigest(JSON.stringify(record)),
      },
      isChildrenReplaced: true,
      change: {
        request_id: ID,
        observed_at: observedAt,
        kind: 'updated',
        source: 'poll',
        changed_columns: 'patient_last_name,service_level_type,last_updated_timestamp_utc',
        old_state: 'accepted',
        new_state: 'accepted',
        old_values_json: json({
          patient_last_name: "O'Brien",
          service_level_type: 'BLS',
          last_updated_timestamp_utc: LAST_UPDATED,
        }),
        new_values_json: json({
          patient_last_name: 'OBrien',
          service_level_type: 'ALS',
          last_updated_timestamp_utc: '2026-11-21T10:00:00.000Z',
        }),
      },
    });
  });

  it('keeps the children when only list fields changed (same record, same hash)', () => {
    const list = listFields({
      state: 'completed',
      last_updated_timestamp_utc: '2026-11-21T10:00:00Z',
    });
    const plan = planDetailWrite(polled(), detailObservation({ list, observedAt: WEBHOOK_AT }));
    expect(plan).toMatchObject({
      outcome: 'changed',
      isChildrenReplaced: false,
      change: {
        kind: 'updated',
        changed_columns: 'list_state,last_updated_timestamp_utc',
        old_state: 'accepted',
        new_state: 'completed',
        old_values_json: json({ list_state: 'accepted', last_updated_timestamp_utc: LAST_UPDATED }),
        new_values_json: json({
          list_state: 'completed',
          last_updated_timestamp_utc: '2026-11-21T10:00:00.000Z',
        }),
      },
    });
  });

  describe('a request marked unavailable comes back', () => {
    const marked = () => polled({ unavailable_at: MARKED_AT });
    const observedAt = '2026-11-21T13:00:00.000Z';

    it('unchanged otherwise: an available change, the mark cleared, the children kept', () => {
      expect(planDetailWrite(marked(), detailObservation({ observedAt }))).toEqual({
        outcome: 'changed',
        row: {
          ...CONTENT,
          unavailable_at: null,
          synced_at: observedAt,
          read_at: observedAt,
          first_seen_at: POLLED_AT,
          source: 'poll',
          content_hash: hashOf(detailRecord(), listFields()),
          raw_json: JSON.stringify(detailRecord()),
          received_digest: receivedDigest(JSON.stringify(detailRecord())),
        },
        isChildrenReplaced: false,
        change: {
          request_id: ID,
          observed_at: observedAt,
          kind: 'available',
          source: 'poll',
          changed_columns: 'unavailable_at',
          old_state: 'accepted',
          new_state: 'accepted',
          old_values_json: json({ unavailable_at: MARKED_AT }),
          new_values_json: json({ unavailable_at: null }),
        },
      });
    });

    it.each([
      [
        'a column changed',
        detailRecord({ patient_first_name: 'Sean' }),
        'patient_first_name,unavailable_at',
        json({ patient_first_name: 'Seán', unavailable_at: MARKED_AT }),
        json({ patient_first_name: 'Sean', unavailable_at: null }),
      ],
      [
        'only unmapped members changed',
        detailRecord({ enabled_patient_fields: { weight_lbs: 175, isolation: null } }),
        'raw_json,unavailable_at',
        json({ raw_json: null, unavailable_at: MARKED_AT }),
        json({ raw_json: null, unavailable_at: null }),
      ],
    ])('%s: the mark is listed last', (_case, record, changedColumns, oldValues, newValues) => {
      const plan = planDetailWrite(marked(), detailObservation({ record, observedAt }));
      expect(plan).toMatchObject({
        outcome: 'changed',
        row: { unavailable_at: null },
        isChildrenReplaced: true,
        change: {
          kind: 'available',
          changed_columns: changedColumns,
          old_values_json: oldValues,
          new_values_json: newValues,
        },
      });
    });
  });

  describe('a record read before the request was marked unavailable', () => {
    // Fetched before the mark (a webhook's UNAVAILABLE, say), written after it.
    const marked = () => polled({ unavailable_at: MARKED_AT });
    const readBefore = '2026-11-21T11:00:00.000Z';

    it('the same record: nothing new, and the mark stays', () => {
      expect(planDetailWrite(marked(), detailObservation({ observedAt: readBefore }))).toEqual({
        outcome: 'unchanged',
        // The row was settled when polled: no read time to move.
        readAt: null,
        receivedDigest: null,
      });
    });

    it('a changed record: its data is stored, the mark kept, no "available"', () => {
      const record = detailRecord({ patient_first_name: 'Sean' });
      const plan = planDetailWrite(marked(), detailObservation({ record, observedAt: readBefore }));
      expect(plan).toMatchObject({
        outcome: 'changed',
        row: { patient_first_name: 'Sean', unavailable_at: MARKED_AT, synced_at: readBefore },
        change: { kind: 'updated', changed_columns: 'patient_first_name' },
      });
    });
  });
});

describe('planPartialWrite', () => {
  /** Plans against the polled row and its locations. */
  const plan = (observation: PartialRequestWrite, stored = polled()) =>
    planPartialWrite(stored, STORED_LOCATIONS, observation);
  const planNew = (observation: PartialRequestWrite) =>
    planPartialWrite(undefined, [], observation);

  it('finds nothing new in what the poll stored: unknown columns, location ids aside', () => {
    expect(plan(partialObservation())).toEqual({ outcome: 'unchanged' });
  });

  it.each([
    ['a millisecond before the last write', 'stale', polled(), '2026-11-21T08:59:59.999Z'],
    ['at the last write', 'unchanged', polled(), POLLED_AT],
    [
      'after the write, before the mark',
      'stale',
      polled({ unavailable_at: MARKED_AT }),
      '2026-11-21T11:59:59.999Z',
    ],
    ['at the mark', 'changed', polled({ unavailable_at: MARKED_AT }), MARKED_AT],
  ])('observed %s: %s', (_case, outcome, stored, observedAt) => {
    const record = detailRecord({ service_level_type: 'ALS' });
    const changed = partialObservation({ record, observedAt });
    expect(plan(partialObservation({ observedAt }), stored).outcome).toBe(outcome);
    // A change does not make an old observation count.
    if (outcome === 'stale') expect(plan(changed, stored).outcome).toBe('stale');
  });

  it('writes a change over the stored unknown columns, clearing last_updated', () => {
    const record = detailRecord({ patient_first_name: 'Sean' });
    // Values in unknown columns are ignored, whatever the observation holds there.
    const observation = partialObservation({ record, content: { facility_id: 'F-OTHER' } });
    expect(plan(observation)).toEqual({
      outcome: 'changed',
      row: {
        ...CONTENT,
        patient_first_name: 'Sean',
        last_updated_timestamp_utc: null,
        unavailable_at: null,
        synced_at: WEBHOOK_AT,
        first_seen_at: POLLED_AT,
        source: 'webhook',
        raw_json: JSON.stringify({ data: record }),
        is_changed: 1,
      },
      movedRoles: [],
      change: {
        request_id: ID,
        observed_at: WEBHOOK_AT,
        kind: 'updated',
        source: 'webhook',
        changed_columns: 'patient_first_name,last_updated_timestamp_utc',
        old_state: 'accepted',
        new_state: 'accepted',
        old_values_json: json({
          patient_first_name: 'Seán',
          last_updated_timestamp_utc: LAST_UPDATED,
        }),
        new_values_json: json({ patient_first_name: 'Sean', last_updated_timestamp_utc: null }),
      },
    });
  });

  it('keeps the stored list state for an unknown (null) one', () => {
    const unknownState = { list_state: null };
    expect(plan(partialObservation({ content: unknownState }))).toEqual({ outcome: 'unchanged' });
    const record = detailRecord({ patient_first_name: 'Sean' });
    expect(plan(partialObservation({ record, content: unknownState }))).toMatchObject({
      row: { list_state: 'accepted' },
      change: {
        changed_columns: 'patient_first_name,last_updated_timestamp_utc',
        new_state: 'accepted',
      },
    });
  });

  it('records a new list state as old and new state', () => {
    expect(plan(partialObservation({ content: { list_state: 'completed' } }))).toMatchObject({
      outcome: 'changed',
      row: { list_state: 'completed', is_changed: 1 },
      change: {
        changed_columns: 'list_state,last_updated_timestamp_utc',
        old_state: 'accepted',
        new_state: 'completed',
      },
    });
  });

  describe('locations', () => {
    const destination = STORED_LOCATIONS.find((location) => location.role === 'destination')!;
    const pickup = STORED_LOCATIONS.find((location) => location.role === 'pickup')!;
    const moved = { ...destination, location_id: null, street: '1 New St' };

    it.each([
      ['moved', [pickup, moved]],
      ['removed', [pickup]],
    ])('a destination %s is replaced, and shows as raw_json', (_case, locations) => {
      expect(plan(partialObservation({ locations }))).toEqual({
        outcome: 'changed',
        row: {
          ...CONTENT,
          last_updated_timestamp_utc: null,
          unavailable_at: null,
          synced_at: WEBHOOK_AT,
          first_seen_at: POLLED_AT,
          source: 'webhook',
          raw_json: JSON.stringify({ data: detailRecord() }),
          is_changed: 1,
        },
        movedRoles: ['destination'],
        change: {
          request_id: ID,
          observed_at: WEBHOOK_AT,
          kind: 'updated',
          source: 'webhook',
          changed_columns: 'last_updated_timestamp_utc,raw_json',
          old_state: 'accepted',
          new_state: 'accepted',
          old_values_json: json({ last_updated_timestamp_utc: LAST_UPDATED, raw_json: null }),
          new_values_json: json({ last_updated_timestamp_utc: null, raw_json: null }),
        },
      });
    });

    it('a location change alone, on a row without last_updated, lists only raw_json', () => {
      const list = listFields({ last_updated_timestamp_utc: undefined });
      const stored = polled({}, detailObservation({ list }));
      expect(plan(partialObservation({ locations: [pickup, moved] }), stored)).toMatchObject({
        movedRoles: ['destination'],
        row: { is_changed: 1, last_updated_timestamp_utc: null },
        change: {
          changed_columns: 'raw_json',
          old_values_json: json({ raw_json: null }),
          new_values_json: json({ raw_json: null }),
        },
      });
    });
  });

  it('a last_updated the write clears anyway shows as raw_json', () => {
    // Only an observation that claims to carry last_updated can differ there alone.
    const list = listFields({ last_updated_timestamp_utc: undefined });
    const stored = polled({}, detailObservation({ list }));
    const observation = partialObservation({
      unknownColumns: ['facility_id', 'created_timestamp_utc'],
      content: { last_updated_timestamp_utc: '2026-11-21T09:30:00.000Z' },
    });
    expect(plan(observation, stored)).toMatchObject({
      outcome: 'changed',
      movedRoles: [],
      row: { is_changed: 1, last_updated_timestamp_utc: null },
      change: { changed_columns: 'raw_json' },
    });
  });

  describe('a request marked unavailable comes back', () => {
    const marked = () => polled({ unavailable_at: MARKED_AT });
    const observedAt = '2026-11-21T13:00:00.000Z';

    it('unchanged otherwise: the stored record, hash and last_updated stay (is_changed 0)', () => {
      expect(plan(partialObservation({ observedAt }), marked())).toEqual({
        outcome: 'changed',
        row: {
          ...CONTENT,
          unavailable_at: null,
          synced_at: observedAt,
          first_seen_at: POLLED_AT,
          source: 'webhook',
          raw_json: JSON.stringify({ data: detailRecord() }),
          is_changed: 0,
        },
        movedRoles: [],
        change: {
          request_id: ID,
          observed_at: observedAt,
          kind: 'available',
          source: 'webhook',
          changed_columns: 'unavailable_at',
          old_state: 'accepted',
          new_state: 'accepted',
          old_values_json: json({ unavailable_at: MARKED_AT }),
          new_values_json: json({ unavailable_at: null }),
        },
      });
    });

    it('with a change: is_changed 1, the mark listed last', () => {
      const record = detailRecord({ patient_first_name: 'Sean' });
      expect(plan(partialObservation({ record, observedAt }), marked())).toMatchObject({
        outcome: 'changed',
        row: { is_changed: 1, last_updated_timestamp_utc: null },
        change: {
          kind: 'available',
          changed_columns: 'patient_first_name,last_updated_timestamp_utc,unavailable_at',
          old_values_json: json({
            patient_first_name: 'Seán',
            last_updated_timestamp_utc: LAST_UPDATED,
            unavailable_at: MARKED_AT,
          }),
          new_values_json: json({
            patient_first_name: 'Sean',
            last_updated_timestamp_utc: null,
            unavailable_at: null,
          }),
        },
      });
    });
  });

  describe('delivered after a later event that marked the request unavailable', () => {
    // The mark's event came later (by event id) but was applied first.
    const marked = () => polled({ unavailable_at: MARKED_AT });
    const underMark = (observation: PartialRequestWrite) => ({
      ...observation,
      laterUnavailableAt: MARKED_AT,
    });

    it('stores its data and keeps the mark: no "available" in between', () => {
      const record = detailRecord({ patient_first_name: 'Sean' });
      const observation = underMark(partialObservation({ record }));
      expect(plan(observation, marked())).toMatchObject({
        outcome: 'changed',
        row: { patient_first_name: 'Sean', unavailable_at: MARKED_AT, synced_at: WEBHOOK_AT },
        change: {
          kind: 'updated',
          changed_columns: 'patient_first_name,last_updated_timestamp_utc',
        },
      });
      // The same observation without the later mark known is older than the mark: stale.
      expect(plan(partialObservation({ record }), marked())).toEqual({ outcome: 'stale' });
    });

    it('is still stale against data written after it', () => {
      const later = polled({ unavailable_at: MARKED_AT, synced_at: '2026-11-21T11:00:00.000Z' });
      expect(plan(underMark(partialObservation()), later)).toEqual({ outcome: 'stale' });
    });

    it('finds nothing new in what the row holds, and leaves the mark alone', () => {
      expect(plan(underMark(partialObservation()), marked())).toEqual({ outcome: 'unchanged' });
    });
  });

  describe('a request not stored', () => {
    it('is created with nulls in its unknown columns and every location', () => {
      const observation = partialObservation({ content: { facility_id: 'F-OTHER' } });
      const content = {
        ...CONTENT,
        facility_id: null,
        created_timestamp_utc: null,
        last_updated_timestamp_utc: null,
      };
      const { request_id: _id, ...values } = content;
      expect(planNew(observation)).toEqual({
        outcome: 'new',
        row: {
          ...content,
          unavailable_at: null,
          synced_at: WEBHOOK_AT,
          first_seen_at: WEBHOOK_AT,
          source: 'webhook',
          raw_json: JSON.stringify({ data: detailRecord() }),
          is_changed: 1,
        },
        movedRoles: ['pickup', 'destination'],
        change: {
          request_id: ID,
          observed_at: WEBHOOK_AT,
          kind: 'created',
          source: 'webhook',
          changed_columns: CONTENT_COLUMNS.join(','),
          old_state: null,
          new_state: 'accepted',
          old_values_json: null,
          new_values_json: json(values),
        },
      });
    });

    it('keeps an unknown list state null and a carried last_updated', () => {
      const observation = partialObservation({
        unknownColumns: ['facility_id', 'created_timestamp_utc'],
        content: { list_state: null, last_updated_timestamp_utc: LAST_UPDATED },
      });
      expect(planNew(observation)).toMatchObject({
        outcome: 'new',
        row: { list_state: null, last_updated_timestamp_utc: LAST_UPDATED, is_changed: 1 },
        change: { kind: 'created', old_state: null, new_state: null },
      });
    });
  });
});

describe('planUnavailable', () => {
  const before = '2026-11-21T08:59:59.999Z';

  it('marks a stored request, its list state unchanged', () => {
    const stored = polled({ list_state: 'completed' });
    expect(planUnavailable(stored, MARKED_AT, 'poll')).toEqual({
      request_id: ID,
      observed_at: MARKED_AT,
      kind: 'unavailable',
      source: 'poll',
      changed_columns: 'unavailable_at',
      old_state: 'completed',
      new_state: 'completed',
      old_values_json: json({ unavailable_at: null }),
      new_values_json: json({ unavailable_at: MARKED_AT }),
    });
  });

  it('marks nothing not stored or already marked', () => {
    expect(planUnavailable(undefined, MARKED_AT, 'poll')).toBeNull();
    expect(planUnavailable(polled({ unavailable_at: WEBHOOK_AT }), MARKED_AT, 'poll')).toBeNull();
  });

  it.each([
    ['guarded, before the last write', false, { isGuarded: true }, before],
    ['guarded, at the last write', true, { isGuarded: true }, POLLED_AT],
    ['unguarded, before the last write', true, { isGuarded: false }, before],
    ['unguarded by default', true, undefined, before],
  ])('%s: marked is %s', (_case, isMarked, options, at) => {
    const change = planUnavailable(polled(), at, 'webhook', options);
    expect(change).toEqual(isMarked ? expect.objectContaining({ observed_at: at }) : null);
  });
});

describe('plan properties', () => {
  const FROM = Date.parse('2026-11-01T00:00:00.000Z');
  const time = fc.integer({ min: FROM, max: FROM + 30 * 86_400_000 }).map(isoFromMs);
  const record = fc
    .record({
      patient_first_name: fc.option(fc.constantFrom('Seán', 'Sean', 'Ada')),
      request_current_state: fc.constantFrom('awaiting', 'accepted', 'en_route', 'completed'),
      service_level_type: fc.option(fc.constantFrom('ALS', 'BLS')),
      collection_id: fc.option(fc.constantFrom('COL1', 'COL2')),
      is_round_trip_first_trip: fc.option(fc.boolean()),
      enabled_request_fields: fc.option(
        fc.dictionary(fc.constantFrom('o2_lpm', 'notes'), fc.string()),
      ),
    })
    .map((overrides) => detailRecord(overrides));
  const list = fc.record(
    {
      state: fc.constantFrom('awaiting', 'accepted', 'completed'),
      created_timestamp_utc: time,
      event_dt_utc: time,
      last_updated_timestamp_utc: time,
    },
    { requiredKeys: [] },
  );
  const detail = fc
    .record({ record, list, observedAt: time, readAt: fc.option(time, { nil: undefined }) })
    .map((options) => detailObservation(options));

  /** The row after the store applied `plan`, as touchRow and upsertRequest write it. */
  function appliedDetail(stored: StoredRow | undefined, plan: DetailPlan) {
    if (plan.outcome === 'stale') return stored;
    if (plan.outcome === 'unchanged') {
      return {
        ...stored!,
        read_at: plan.readAt ?? stored!.read_at,
        received_digest: plan.receivedDigest ?? stored!.received_digest,
      };
    }
    return storedFrom(plan);
  }

  it('finds nothing new in an observation against the row its own plan stored', () => {
    fc.assert(
      fc.property(fc.option(detail, { nil: undefined }), detail, (earlier, observation) => {
        const before = earlier && polled({}, earlier);
        const plan = planDetailWrite(before, observation);
        const after = appliedDetail(before, plan);
        expect(planDetailWrite(after, observation)).toEqual(
          plan.outcome === 'stale'
            ? { outcome: 'stale' }
            : { outcome: 'unchanged', readAt: null, receivedDigest: null },
        );
      }),
    );
  });

  it('finds a detail without last_updated, observed before the stored row, stale', () => {
    const withoutLastUpdated = fc
      .record({
        record,
        list: list.map(({ last_updated_timestamp_utc: _lastUpdated, ...rest }) => rest),
        observedAt: time,
      })
      .map((options) => detailObservation(options));
    fc.assert(
      fc.property(
        detail,
        withoutLastUpdated,
        fc.integer({ min: 1, max: 86_400_000 }),
        (earlier, observation, ms) => {
          const stored = polled({}, earlier);
          const older = {
            ...observation,
            observedAt: isoFromMs(Date.parse(stored.synced_at) - ms),
          };
          expect(planDetailWrite(stored, older)).toEqual({ outcome: 'stale' });
        },
      ),
    );
  });

  const partial = fc
    .record({
      record,
      observedAt: time,
      content: fc.record({ list_state: fc.option(fc.constantFrom('accepted', 'completed')) }),
      isDestinationGone: fc.boolean(),
      street: fc.option(fc.constantFrom('1 New St', '2 Old Rd')),
    })
    .map(({ isDestinationGone, street, ...options }) => {
      const observation = partialObservation(options);
      const locations = observation.locations
        .filter((location) => !(isDestinationGone && location.role === 'destination'))
        .map((location) => (street ? { ...location, street } : location));
      return { ...observation, locations };
    });

  it('finds a partial observation made before the last write or the mark stale', () => {
    fc.assert(
      fc.property(
        detail,
        fc.option(time),
        partial,
        fc.integer({ min: 1, max: 86_400_000 }),
        (earlier, markedAt, observation, ms) => {
          const stored = polled({ unavailable_at: markedAt }, earlier);
          const latest = markedAt && markedAt > stored.synced_at ? markedAt : stored.synced_at;
          const older = { ...observation, observedAt: isoFromMs(Date.parse(latest) - ms) };
          expect(planPartialWrite(stored, STORED_LOCATIONS, older)).toEqual({ outcome: 'stale' });
        },
      ),
    );
  });

  /** The row and locations after the store applied a partial plan (upsertPartial and friends). */
  function appliedPartial(
    stored: StoredRow | undefined,
    locations: LocationRow[],
    observation: PartialRequestWrite,
    plan: PartialPlan,
  ): { stored: StoredRow | undefined; locations: LocationRow[] } {
    if (plan.outcome === 'stale' || plan.outcome === 'unchanged') return { stored, locations };
    const { source: _source, raw_json: _rawJson, is_changed: isChanged, ...row } = plan.row;
    return {
      stored: {
        ...row,
        unavailable_at: null,
        read_at: stored?.read_at ?? null,
        content_hash: isChanged ? null : (stored?.content_hash ?? null),
        received_digest: isChanged ? null : (stored?.received_digest ?? null),
      },
      locations: [
        ...locations.filter((location) => !plan.movedRoles.includes(location.role)),
        ...observation.locations.filter((location) => plan.movedRoles.includes(location.role)),
      ],
    };
  }

  it('finds nothing new in a partial observation against what its own plan stored', () => {
    fc.assert(
      fc.property(
        fc.option(detail, { nil: undefined }),
        fc.option(time),
        partial,
        (earlier, markedAt, observation) => {
          const before = earlier && polled({ unavailable_at: markedAt }, earlier);
          // The arbitrary records keep detailRecord()'s locations.
          const locations = before ? STORED_LOCATIONS : [];
          const plan = planPartialWrite(before, locations, observation);
          const after = appliedPartial(before, locations, observation, plan);
          expect(planPartialWrite(after.stored, after.locations, observation)).toEqual({
            outcome: plan.outcome === 'stale' ? 'stale' : 'unchanged',
          });
        },
      ),
    );
  });
});
