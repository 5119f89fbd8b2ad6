import { c, table, type RowOf } from './columns.js';

/*
 * The mirror's request tables. Their names and columns are a public interface: reporting tools
 * query them with plain SQL. Add columns freely; never rename one.
 */

/** One row per request the service has shown the provider. Nothing is ever deleted. */
export const requests = table(
  'requests',
  {
    request_id: c.text().primaryKey(),
    /** The state the lists report: awaiting, accepted, completed, canceled. */
    list_state: c.text(),
    request_current_state: c.text(),
    patient_first_name: c.text(),
    patient_last_name: c.text(),
    patient_dob: c.date(),
    transport_pickup_time: c.timestamp(),
    transport_agreed_for_time: c.timestamp(),
    service_level_type: c.text(),
    service_type: c.text(),
    account_id: c.text(),
    facility_id: c.text(),
    user_first_name: c.text(),
    user_last_name: c.text(),
    user_email: c.text(),
    is_round_trip_first_trip: c.boolean(),
    is_round_trip_return_trip: c.boolean(),
    collection_id: c.text(),
    created_timestamp_utc: c.timestamp(),
    /** Agreed time, else requested pickup time, else created time: what the list filters on. */
    event_dt_utc: c.timestamp(),
    /** As the partial list reported it, stored only with the detail it came with. */
    last_updated_timestamp_utc: c.timestamp(),
    /** Set when the service stopped showing the request to us (403); cleared if it returns. */
    unavailable_at: c.timestamp(),
    /** When this row's content was last written from the service. */
    synced_at: c.timestamp().notNull(),
    /**
     * When the stored record was read, on the service's clock (ours corrected by the skew its
     * Date header shows). The row is settled once this is a full second past last_updated.
     */
    read_at: c.timestamp(),
    first_seen_at: c.timestamp().notNull(),
    /** poll, backfill or webhook: the path of the last write. */
    source: c.text().notNull(),
    /** Hash of the record's content without location ids, to skip unchanged full-list records. */
    content_hash: c.text(),
    /** The last record as received, members this version does not know included. */
    raw_json: c.json().notNull(),
    /**
     * SHA-1 (base64url) of the last record text received whose content the row holds, as sent:
     * the same text received again is passed over without reading raw_json. Set by reads of the
     * detail and the full list; null after a webhook's write, and until such a read.
     */
    received_digest: c.text(),
  },
  {
    indexes: {
      requests_event_dt_idx: ['event_dt_utc'],
      requests_state_event_dt_idx: ['list_state', 'event_dt_utc'],
      requests_account_event_dt_idx: ['account_id', 'event_dt_utc'],
      requests_collection_idx: ['collection_id'],
      requests_unavailable_idx: ['unavailable_at'],
    },
    sqliteIndexes: {
      // Every poll cycle reads these columns of each request in its window (the summaries),
      // and this index alone answers it. From the table, SQLite had to walk each row's overflow
      // pages to reach read_at: a column added by a migration goes last, after raw_json's 4 KB
      // and more. PostgreSQL has no overflow pages to walk (raw_json, compressed to some 1.5
      // KB, stays in the row), and such an index there would cost every update of read_at its
      // HOT path, so it has none.
      // It answers the awaiting pass's digests too (held_digest): from the table they took an
      // idle cycle 24 ms at 5,000 requests, from the index 1.3 ms. received_digest changes only
      // with read_at, so it costs a write no other index update.
      requests_summary_idx: [
        'event_dt_utc',
        'request_id',
        'list_state',
        'last_updated_timestamp_utc',
        'unavailable_at',
        'read_at',
        'received_digest',
      ],
    },
  },
);

/** Pickup and destination of each request. */
export const requestLocations = table(
  'request_locations',
  {
    request_id: c.text().notNull().references('requests', 'request_id'),
    /** 'pickup' or 'destination'. */
    role: c.text().notNull(),
    location_id: c.text(),
    lat: c.real(),
    lng: c.real(),
    zip: c.text(),
    city: c.text(),
    name: c.text(),
    state: c.text(),
    street: c.text(),
    address: c.text(),
    country: c.text(),
  },
  { primaryKey: ['request_id', 'role'] },
);

/** Requesting organizations, as the requests last showed them. */
export const accounts = table('accounts', {
  account_id: c.text().primaryKey(),
  name: c.text(),
  service_levels_json: c.json(),
  /** Null while only `exclude_facilities` responses have been seen. */
  facilities_json: c.json(),
  updated_at: c.timestamp().notNull(),
});

/** Origin facilities of requests. */
export const facilities = table(
  'facilities',
  {
    facility_id: c.text().primaryKey(),
    name: c.text(),
    account_id: c.text(),
    updated_at: c.timestamp().notNull(),
  },
  { indexes: { facilities_account_idx: ['account_id'] } },
);

/** The configurable fields of each request: enabled_patient_fields and enabled_request_fields. */
export const requestFields = table(
  'request_fields',
  {
    request_id: c.text().notNull().references('requests', 'request_id'),
    /** 'patient' or 'request'. */
    scope: c.text().notNull(),
    name: c.text().notNull(),
    value_json: c.json(),
  },
  { primaryKey: ['request_id', 'scope', 'name'] },
);

/** One row per change to a stored request: when, by which path, which columns, old and new. */
export const requestChanges = table(
  'request_changes',
  {
    change_id: c.id(),
    request_id: c.text().notNull(),
    observed_at: c.timestamp().notNull(),
    /** created, updated, unavailable, available, or profile (request_profiles alone). */
    kind: c.text().notNull(),
    source: c.text().notNull(),
    /** Comma-separated names of the requests columns that changed. */
    changed_columns: c.text().notNull(),
    old_state: c.text(),
    new_state: c.text(),
    /** JSON objects of the changed columns' old and new values. */
    old_values_json: c.json(),
    new_values_json: c.json(),
    /**
     * When the transaction that logged the change wrote it, just before its commit (the change
     * feed's committed_at); null on rows logged before the feed.
     */
    committed_at: c.timestamp(),
  },
  {
    indexes: {
      request_changes_request_idx: ['request_id', 'observed_at'],
      request_changes_observed_idx: ['observed_at'],
    },
  },
);

/** A requests row. */
export type RequestRow = RowOf<typeof requests>;
/** A request_locations row. */
export type LocationRow = Omit<RowOf<typeof requestLocations>, 'role'> & {
  role: 'pickup' | 'destination';
};
/** A request_fields row. */
export type FieldRow = Omit<RowOf<typeof requestFields>, 'scope'> & {
  scope: 'patient' | 'request';
};
/** An accounts row (updated_at is the store's). */
export type AccountRow = Omit<RowOf<typeof accounts>, 'updated_at'>;
/** A facilities row (updated_at is the store's). */
export type FacilityRow = Omit<RowOf<typeof facilities>, 'updated_at'>;

/** Columns of a requests row that hold the record's content; the change log tracks these. */
export const CONTENT_COLUMNS = [
  'list_state',
  'request_current_state',
  'patient_first_name',
  'patient_last_name',
  'patient_dob',
  'transport_pickup_time',
  'transport_agreed_for_time',
  'service_level_type',
  'service_type',
  'account_id',
  'facility_id',
  'user_first_name',
  'user_last_name',
  'user_email',
  'is_round_trip_first_trip',
  'is_round_trip_return_trip',
  'collection_id',
  'created_timestamp_utc',
  'event_dt_utc',
  'last_updated_timestamp_utc',
] as const satisfies readonly (keyof RequestRow)[];

/** A requests row's content columns (the bookkeeping columns are the store's). */
export type RequestContent = Pick<RequestRow, 'request_id' | (typeof CONTENT_COLUMNS)[number]>;

/** The members of a location the store compares and writes (its id aside). */
export const LOCATION_MEMBERS = [
  'lat',
  'lng',
  'zip',
  'city',
  'name',
  'state',
  'street',
  'address',
  'country',
] as const satisfies readonly (keyof LocationRow)[];
