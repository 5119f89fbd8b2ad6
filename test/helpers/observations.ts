import fc from 'fast-check';
import type { RequestWrite, WriteSource } from '../../src/mirror/observations.js';
import { normalizeDetail, type ListFields } from '../../src/sync/normalize.js';
import { isoFromMs } from '../../src/time.js';
import { detailRecord } from './records.js';

/*
 * Detail observations of a few requests that differ in every way a write decides on: content
 * (the record's hash), list fields (kept when unknown), last_updated (the stale guard), the time
 * made (the guard without last_updated), the read time (settling), locations (moved children),
 * fields, the account (its facilities null or not), the facility, and the text's spelling (the
 * same content, members in another order: a new received_digest); and sequences of them with
 * unavailable marks between, for tests that compare writing them in batches with one by one.
 */

/** The ids the sequences draw from: few, so that they repeat within a batch. */
export const IDS = ['A1111111', 'B2222222', 'C3333333'] as const;

const BASE_MS = Date.parse('2026-11-21T08:00:00.000Z');
const MINUTE = 60_000;

/** One observation, by the index of each of its choices. */
export interface ObservationSpec {
  id: number;
  /** Minutes after BASE of last_updated, or null: the list did not say. */
  lastUpdated: number | null;
  /** Minutes after BASE of the observation. */
  observedAt: number;
  /** Milliseconds the read came after last_updated (below 1,000: unsettled). */
  readDelayMs: number;
  note: number;
  city: number;
  hasDestination: boolean;
  accountName: number;
  hasAccountFacilities: boolean;
  hasFacility: boolean;
  state: 'accepted' | 'awaiting' | null;
  fieldCount: number;
  source: WriteSource;
  /** 0: the record's text as built; 1: the same members in reverse order (the same content). */
  spelling: number;
}

/** An accepted request with a destination, an account with facilities, a facility and one field. */
export const BASE_SPEC: ObservationSpec = {
  id: 0,
  lastUpdated: 1,
  observedAt: 10,
  readDelayMs: 1_500,
  note: 0,
  city: 0,
  hasDestination: true,
  accountName: 0,
  hasAccountFacilities: true,
  hasFacility: true,
  state: 'accepted',
  fieldCount: 1,
  source: 'poll',
  spelling: 0,
};

/** A detail observation of the spec. */
export function observationOf(spec: ObservationSpec): RequestWrite {
  const id = IDS[spec.id]!;
  const base = detailRecord();
  const record = detailRecord({
    request_id: id,
    enabled_request_fields: {
      o2_lpm: '2',
      notes: ['Stairs at entrance', 'Ramp at the back', 'Call on arrival'][spec.note],
      ...(spec.fieldCount > 0 && { escort: 'daughter' }),
    },
    pickup_location: { ...base.pickup_location, city: ['Chicago', 'Evanston'][spec.city] },
    destination_location: spec.hasDestination ? base.destination_location : null,
    account: {
      id: 'ACC1',
      name: ['Mercy Health', 'Mercy Health System'][spec.accountName],
      service_levels: ['ALS', 'BLS'],
      facilities: spec.hasAccountFacilities ? [{ id: 'F1', name: 'Mercy Main' }] : null,
    },
    facility: spec.hasFacility ? { id: 'F1', name: `Mercy Main ${spec.accountName}` } : null,
  });
  const lastUpdatedMs = spec.lastUpdated === null ? null : BASE_MS + spec.lastUpdated * MINUTE;
  const list: ListFields = {
    ...(spec.state && { state: spec.state }),
    ...(lastUpdatedMs !== null && { last_updated_timestamp_utc: isoFromMs(lastUpdatedMs) }),
  };
  const observedAt = isoFromMs(BASE_MS + spec.observedAt * MINUTE);
  return {
    normalized: normalizeDetail(record, list),
    rawJson: JSON.stringify(
      spec.spelling === 0 ? record : Object.fromEntries(Object.entries(record).reverse()),
    ),
    source: spec.source,
    observedAt,
    readAt: lastUpdatedMs === null ? observedAt : isoFromMs(lastUpdatedMs + spec.readDelayMs),
  };
}

/** Mostly `usual`, sometimes one of `others`: observations that repeat, and now and then differ. */
const mostly = <T>(usual: T, ...others: T[]): fc.Arbitrary<T> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(usual) },
    { weight: 1, arbitrary: fc.constantFrom(...others) },
  );

/** Any observation spec. */
export const observationSpec: fc.Arbitrary<ObservationSpec> = fc.record({
  id: fc.integer({ min: 0, max: IDS.length - 1 }),
  lastUpdated: fc.option(fc.integer({ min: 0, max: 3 }), { freq: 4 }),
  observedAt: fc.integer({ min: 10, max: 16 }),
  readDelayMs: fc.constantFrom(0, 400, 1_500),
  note: mostly(0, 1, 2),
  city: mostly(0, 1),
  hasDestination: mostly(true, false),
  accountName: mostly(0, 1),
  hasAccountFacilities: mostly(true, false),
  hasFacility: mostly(true, false),
  state: mostly<ObservationSpec['state']>('accepted', 'awaiting', null),
  fieldCount: mostly(0, 1),
  source: mostly<WriteSource>('poll', 'backfill'),
  spelling: mostly(0, 1),
});

/** A step of a sequence: an observation, or an unavailable mark (which ends a batch). */
export type Step =
  { kind: 'observe'; spec: ObservationSpec } | { kind: 'unavailable'; id: number; at: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: observationSpec.map((spec) => ({ kind: 'observe' as const, spec })) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('unavailable' as const),
      id: fc.integer({ min: 0, max: IDS.length - 1 }),
      at: fc.integer({ min: 10, max: 16 }),
    }),
  },
);

/** A sequence of steps, and where it is cut into batches (a cut after step i when cuts[i]). */
export const stepsAndCuts = fc.record({
  steps: fc.array(step, { minLength: 1, maxLength: 14 }),
  cuts: fc.array(fc.boolean(), { minLength: 14, maxLength: 14 }),
});

/** A stretch of a sequence: observations written together, or one unavailable mark. */
export type Stretch =
  | { kind: 'observe'; observations: RequestWrite[] }
  | { kind: 'unavailable'; id: string; at: string };

/**
 * The sequence as stretches: each run of observations cut where `cuts` says (never, when
 * `cuts` is empty: one batch per run), every mark on its own.
 */
export function stretchesOf(steps: readonly Step[], cuts: readonly boolean[] = []): Stretch[] {
  const stretches: Stretch[] = [];
  let open: RequestWrite[] | null = null;
  for (const [index, s] of steps.entries()) {
    if (s.kind === 'unavailable') {
      open = null;
      stretches.push({
        kind: 'unavailable',
        id: IDS[s.id]!,
        at: isoFromMs(BASE_MS + s.at * MINUTE),
      });
      continue;
    }
    if (!open) {
      open = [];
      stretches.push({ kind: 'observe', observations: open });
    }
    open.push(observationOf(s.spec));
    if (cuts[index]) open = null;
  }
  return stretches;
}

/** The same stretches with every observation on its own. */
export function oneByOne(steps: readonly Step[]): Stretch[] {
  return stretchesOf(
    steps,
    steps.map(() => true),
  );
}
