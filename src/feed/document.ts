/*
 * The change document: what every sink of the change feed sends for one row of request_changes,
 * decided without I/O. docs/feed.md gives its JSON Schema; tests validate what sinks send
 * against it.
 */

/** What a change did, as the feed names it. */
export const FEED_KINDS = ['new', 'changed', 'state', 'unavailable', 'profile'] as const;
/** A change document's kind. */
export type FeedKind = (typeof FEED_KINDS)[number];

/** A request_changes row with its position, as the feed reads it. */
export interface ChangeLogRow {
  position: number;
  request_id: string;
  /** request_changes.kind: created, updated, available, unavailable or profile. */
  kind: string;
  source: string;
  committed_at: string;
  changed_columns: string;
  old_state: string | null;
  new_state: string | null;
  old_values: Record<string, unknown> | null;
  new_values: Record<string, unknown> | null;
}

/** A request_overview row (see docs/database.md), booleans as true and false. */
export type OverviewRow = Record<string, unknown> & { request_id: string };

/** One change as every sink sends it. */
export interface ChangeDocument {
  position: number;
  request_id: string;
  kind: FeedKind;
  committed_at: string;
  source: string;
  changed_columns: string[];
  old_state: string | null;
  new_state: string | null;
  /** The changed columns' values before and after; patient-identifying ones only with PHI. */
  old_values: Record<string, unknown> | null;
  new_values: Record<string, unknown> | null;
  /** The request's request_overview row when the change was read; null once it is gone. */
  request: OverviewRow | null;
}

/** Columns whose state change makes a change of kind `state`. */
const STATE_COLUMNS = new Set(['list_state', 'request_current_state']);

/**
 * Columns that identify a patient or a person (names, date of birth, e-mail): a sink sends them
 * only when its INCLUDE_PHI setting is on. Of the requests columns and the request_overview's.
 */
export const PHI_COLUMNS: ReadonlySet<string> = new Set([
  'patient_first_name',
  'patient_last_name',
  'patient_dob',
  'user_first_name',
  'user_last_name',
  'user_email',
]);

/**
 * The request_profiles columns a `profile` change's values carry without PHI: where and when,
 * what a crew needs to act. Every other profile column (names, member and subscriber ids, phone
 * numbers, notes, diagnoses, medications, coverage) goes out only with INCLUDE_PHI; its name
 * still shows in changed_columns. An allow-list, so that a column added later stays in until
 * someone judges it.
 */
export const PROFILE_COLUMNS_WITHOUT_PHI: ReadonlySet<string> = new Set([
  'scheduling_option',
  'scheduling_type',
  'account_name',
  'facility_name',
  'pickup_facility_name',
  'pickup_facility_type',
  'pickup_exact_location',
  'pickup_room_number',
  'pickup_stair_steps',
  'destination_facility_name',
  'destination_facility_type',
  'destination_exact_location',
  'destination_address_detail',
  'destination_room_number',
  'destination_stair_steps',
  'trip_priority_level',
  'appointment_datetime',
  'return_date_time',
  'revised_eta',
  'wait_and_return',
  'return_on_will_call',
  'round_trip_other_service_request_id',
  'change_request_enabled',
  'escalated',
]);

/** The feed's kind of a change-log row. */
export function feedKindOf(row: Pick<ChangeLogRow, 'kind' | 'changed_columns'>): FeedKind {
  if (row.kind === 'created') return 'new';
  if (row.kind === 'unavailable') return 'unavailable';
  if (row.kind === 'profile') return 'profile';
  const columns = row.changed_columns.split(',');
  return columns.some((column) => STATE_COLUMNS.has(column)) ? 'state' : 'changed';
}

function withoutPhi<T extends Record<string, unknown>>(values: T): T {
  return Object.fromEntries(Object.entries(values).filter(([key]) => !PHI_COLUMNS.has(key))) as T;
}

/** The document of a change-log row and the request's overview row (undefined: gone). */
export function changeDocument(
  row: ChangeLogRow,
  overview: OverviewRow | undefined,
  { isPhiIncluded }: { isPhiIncluded: boolean },
): ChangeDocument {
  const filter = <T extends Record<string, unknown>>(values: T | null): T | null =>
    values === null || isPhiIncluded ? values : withoutPhi(values);
  const filterValues =
    row.kind === 'profile'
      ? (values: Record<string, unknown> | null) =>
          values === null || isPhiIncluded
            ? values
            : Object.fromEntries(
                Object.entries(values).filter(([key]) => PROFILE_COLUMNS_WITHOUT_PHI.has(key)),
              )
      : filter;
  return {
    position: row.position,
    request_id: row.request_id,
    kind: feedKindOf(row),
    committed_at: row.committed_at,
    source: row.source,
    changed_columns: row.changed_columns === '' ? [] : row.changed_columns.split(','),
    old_state: row.old_state,
    new_state: row.new_state,
    old_values: filterValues(row.old_values),
    new_values: filterValues(row.new_values),
    request: overview === undefined ? null : filter(overview),
  };
}
