import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/*
 * The mirror's tables. Their names and columns are a public interface: reporting tools query them
 * with plain SQL. Timestamps are ISO-8601 UTC text with milliseconds, dates YYYY-MM-DD, booleans
 * INTEGER 0/1, JSON as text. Add columns freely; never rename one.
 */

/** One row per request the service has shown the provider. Nothing is ever deleted. */
export const requests = sqliteTable(
  'requests',
  {
    requestId: text('request_id').primaryKey(),
    /** The state the lists report: awaiting, accepted, completed, canceled. */
    listState: text('list_state'),
    requestCurrentState: text('request_current_state'),
    patientFirstName: text('patient_first_name'),
    patientLastName: text('patient_last_name'),
    patientDob: text('patient_dob'),
    transportPickupTime: text('transport_pickup_time'),
    transportAgreedForTime: text('transport_agreed_for_time'),
    serviceLevelType: text('service_level_type'),
    serviceType: text('service_type'),
    accountId: text('account_id'),
    facilityId: text('facility_id'),
    userFirstName: text('user_first_name'),
    userLastName: text('user_last_name'),
    userEmail: text('user_email'),
    isRoundTripFirstTrip: integer('is_round_trip_first_trip'),
    isRoundTripReturnTrip: integer('is_round_trip_return_trip'),
    collectionId: text('collection_id'),
    createdTimestampUtc: text('created_timestamp_utc'),
    /** Agreed time, else requested pickup time, else created time: what the list filters on. */
    eventDtUtc: text('event_dt_utc'),
    /** As the partial list reported it, stored only with the detail it came with. */
    lastUpdatedTimestampUtc: text('last_updated_timestamp_utc'),
    /** Set when the service stopped showing the request to us (403); cleared if it returns. */
    unavailableAt: text('unavailable_at'),
    /** When this row's content was last written from the service. */
    syncedAt: text('synced_at').notNull(),
    /**
     * When the stored record was read, on the service's clock (ours corrected by the skew its
     * Date header shows). The row is settled once this is a full second past last_updated.
     */
    readAt: text('read_at'),
    firstSeenAt: text('first_seen_at').notNull(),
    /** poll, backfill or webhook: the path of the last write. */
    source: text('source').notNull(),
    /** Hash of the record's content without location ids, to skip unchanged full-list records. */
    contentHash: text('content_hash'),
    /** The last record exactly as received, members this version does not know included. */
    rawJson: text('raw_json').notNull(),
  },
  (table) => [
    index('requests_event_dt_idx').on(table.eventDtUtc),
    index('requests_state_event_dt_idx').on(table.listState, table.eventDtUtc),
    index('requests_account_event_dt_idx').on(table.accountId, table.eventDtUtc),
    index('requests_collection_idx').on(table.collectionId),
    index('requests_unavailable_idx').on(table.unavailableAt),
  ],
);

/** Pickup and destination of each request. */
export const requestLocations = sqliteTable(
  'request_locations',
  {
    requestId: text('request_id')
      .notNull()
      .references(() => requests.requestId, { onDelete: 'cascade' }),
    /** 'pickup' or 'destination'. */
    role: text('role').notNull(),
    locationId: text('location_id'),
    lat: real('lat'),
    lng: real('lng'),
    zip: text('zip'),
    city: text('city'),
    name: text('name'),
    state: text('state'),
    street: text('street'),
    address: text('address'),
    country: text('country'),
  },
  (table) => [primaryKey({ columns: [table.requestId, table.role] })],
);

/** Requesting organizations, as the requests last showed them. */
export const accounts = sqliteTable('accounts', {
  accountId: text('account_id').primaryKey(),
  name: text('name'),
  serviceLevelsJson: text('service_levels_json'),
  /** Null while only `exclude_facilities` responses have been seen. */
  facilitiesJson: text('facilities_json'),
  updatedAt: text('updated_at').notNull(),
});

/** Origin facilities of requests. */
export const facilities = sqliteTable(
  'facilities',
  {
    facilityId: text('facility_id').primaryKey(),
    name: text('name'),
    accountId: text('account_id'),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [index('facilities_account_idx').on(table.accountId)],
);

/** The configurable fields of each request: enabled_patient_fields and enabled_request_fields. */
export const requestFields = sqliteTable(
  'request_fields',
  {
    requestId: text('request_id')
      .notNull()
      .references(() => requests.requestId, { onDelete: 'cascade' }),
    /** 'patient' or 'request'. */
    scope: text('scope').notNull(),
    name: text('name').notNull(),
    valueJson: text('value_json'),
  },
  (table) => [primaryKey({ columns: [table.requestId, table.scope, table.name] })],
);

/** One row per change to a stored request: when, by which path, which columns, old and new. */
export const requestChanges = sqliteTable(
  'request_changes',
  {
    changeId: integer('change_id').primaryKey({ autoIncrement: true }),
    requestId: text('request_id').notNull(),
    observedAt: text('observed_at').notNull(),
    /** created, updated, unavailable or available. */
    kind: text('kind').notNull(),
    source: text('source').notNull(),
    /** Comma-separated names of the requests columns that changed. */
    changedColumns: text('changed_columns').notNull(),
    oldState: text('old_state'),
    newState: text('new_state'),
    /** JSON objects of the changed columns' old and new values. */
    oldValuesJson: text('old_values_json'),
    newValuesJson: text('new_values_json'),
  },
  (table) => [
    index('request_changes_request_idx').on(table.requestId, table.observedAt),
    index('request_changes_observed_idx').on(table.observedAt),
  ],
);

/** One row per poll cycle, backfill or other run, with its counts. */
export const syncRuns = sqliteTable(
  'sync_runs',
  {
    runId: integer('run_id').primaryKey({ autoIncrement: true }),
    /** poll, backfill. */
    kind: text('kind').notNull(),
    startedAt: text('started_at').notNull(),
    finishedAt: text('finished_at'),
    /** running, ok, partial (some requests failed and will be retried), failed, aborted. */
    status: text('status').notNull(),
    windowFrom: text('window_from'),
    windowTo: text('window_to'),
    listCalls: integer('list_calls').notNull().default(0),
    detailCalls: integer('detail_calls').notNull().default(0),
    retries: integer('retries').notNull().default(0),
    requestsSeen: integer('requests_seen').notNull().default(0),
    requestsNew: integer('requests_new').notNull().default(0),
    requestsChanged: integer('requests_changed').notNull().default(0),
    requestsUnchanged: integer('requests_unchanged').notNull().default(0),
    requestsUnavailable: integer('requests_unavailable').notNull().default(0),
    requestsFailed: integer('requests_failed').notNull().default(0),
    requestsQuarantined: integer('requests_quarantined').notNull().default(0),
    /** Members of this run's records that were missing, retyped or unknown (see schema_drift). */
    schemaDrift: integer('schema_drift').notNull().default(0),
    error: text('error'),
    /** The process that ran it: a 'running' row whose process is gone was killed. */
    pid: integer('pid'),
    host: text('host'),
  },
  (table) => [index('sync_runs_kind_started_idx').on(table.kind, table.startedAt)],
);

/** Records the service sent that failed validation: kept apart, retried on later cycles. */
export const quarantine = sqliteTable('quarantine', {
  /** The request id, or `unknown:<hash>` for a record without a usable id. */
  recordKey: text('record_key').primaryKey(),
  requestId: text('request_id'),
  source: text('source').notNull(),
  reason: text('reason').notNull(),
  rawPayload: text('raw_payload').notNull(),
  firstSeenAt: text('first_seen_at').notNull(),
  lastSeenAt: text('last_seen_at').notNull(),
  seenCount: integer('seen_count').notNull().default(1),
});

/**
 * Members the service sent differently from its documented shape: missing, of another type, or
 * unknown. Type names only, never values. One row per request and member (per member alone for
 * unknown members, which repeat on every record).
 */
export const schemaDrift = sqliteTable(
  'schema_drift',
  {
    /** source, request (empty for unknown members), member and problem, joined. */
    driftKey: text('drift_key').primaryKey(),
    /** The request it was seen on (for an unknown member: the first one). */
    requestId: text('request_id'),
    /** poll, backfill or webhook. */
    source: text('source').notNull(),
    /** Dotted path of the member, such as pickup_location.lat. */
    member: text('member').notNull(),
    /** missing, type or unknown. */
    problem: text('problem').notNull(),
    /** The documented type name; null for an unknown member. */
    expected: text('expected'),
    /** The received type name; null for a missing member. */
    received: text('received'),
    firstSeenAt: text('first_seen_at').notNull(),
    lastSeenAt: text('last_seen_at').notNull(),
    count: integer('count').notNull().default(1),
  },
  (table) => [
    index('schema_drift_member_idx').on(table.member, table.problem),
    index('schema_drift_request_idx').on(table.requestId),
  ],
);

/**
 * Stretches in which the webhook receiver could not accept or store deliveries: the daemon was
 * down (from its last heartbeat to its next start), or storing failed. The service retries a
 * delivery for about 64 s and then drops it, so a longer gap may have lost events.
 */
export const intakeGaps = sqliteTable(
  'intake_gaps',
  {
    gapId: integer('gap_id').primaryKey({ autoIncrement: true }),
    startedAt: text('started_at').notNull(),
    endedAt: text('ended_at').notNull(),
    seconds: real('seconds').notNull(),
    /** Open requests (awaiting or accepted, pickup ahead) when the gap was recorded. */
    requestsAtRisk: integer('requests_at_risk').notNull().default(0),
    /** daemon_down or store_failed. */
    reason: text('reason').notNull(),
    /** 1 when longer than TRANSPORT_INTAKE_GAP_ALARM_SECONDS: events may have been lost. */
    isAlarmed: integer('is_alarmed').notNull().default(0),
    /** When an operator acknowledged it (`transport-sync gaps --ack`). */
    reviewedAt: text('reviewed_at'),
  },
  (table) => [index('intake_gaps_started_idx').on(table.startedAt)],
);

/** Small key/value facts the daemon keeps (schema owner, last successful cycle). */
export const syncState = sqliteTable('sync_state', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: text('updated_at')
    .notNull()
    .default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`),
});

/** Every webhook delivery accepted, stored before the 2xx is sent; applied afterwards from here. */
export const webhookEvents = sqliteTable(
  'webhook_events',
  {
    eventId: text('event_id').primaryKey(),
    /** v2 or v1: which envelope the delivery used. */
    envelope: text('envelope').notNull(),
    eventTimestamp: text('event_timestamp'),
    serviceRequestId: text('service_request_id'),
    requestStatus: text('request_status'),
    action: text('action'),
    /** v1.0 envelopes: request.state.available, collection.state.updated, ... */
    eventType: text('event_type'),
    payloadJson: text('payload_json').notNull(),
    receivedAt: text('received_at').notNull(),
    /** Null until applied; set also when applying failed for good (see error). */
    processedAt: text('processed_at'),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
  },
  (table) => [
    index('webhook_events_pending_idx').on(table.processedAt, table.eventId),
    index('webhook_events_request_idx').on(table.serviceRequestId, table.eventId),
  ],
);

/** The delivery bookkeeping both outbox tables carry. */
function deliveryColumns() {
  return {
    /** pending, sent or failed. */
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    nextAttemptAt: text('next_attempt_at'),
    sentAt: text('sent_at'),
    createdAt: text('created_at')
      .notNull()
      .default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`),
  };
}

/**
 * GPS samples other programs queue for the service, with plain SQL. The daemon sends them per
 * request in timestamp order, at most 200 per call.
 */
export const outboxLocations = sqliteTable(
  'outbox_locations',
  {
    outboxId: integer('outbox_id').primaryKey({ autoIncrement: true }),
    requestId: text('request_id').notNull(),
    lat: real('lat'),
    lng: real('lng'),
    alt: real('alt'),
    speed: real('speed'),
    /** Unix epoch seconds, fractions allowed, as the service takes it. */
    timestamp: real('timestamp'),
    ...deliveryColumns(),
  },
  (table) => [
    index('outbox_locations_pending_idx').on(table.status, table.requestId, table.timestamp),
  ],
);

/**
 * Provider actions other programs queue with plain SQL: accept, decline, state, change_request,
 * best_time. Sent per request in the order inserted.
 */
export const outboxActions = sqliteTable(
  'outbox_actions',
  {
    outboxId: integer('outbox_id').primaryKey({ autoIncrement: true }),
    requestId: text('request_id').notNull(),
    /** accept, decline, state, change_request or best_time. */
    kind: text('kind').notNull(),
    /** accept and decline: response_notes (at most 450 characters). */
    notes: text('notes'),
    /** state: the state name (en_route, arrived, on_board, ...). */
    stateName: text('state_name'),
    /** state: its timestamp; change_request: agreed_dt; best_time: proposed_agreed_dt (ISO 8601). */
    at: text('at'),
    /** change_request: change_reason (at most 450 characters). */
    reason: text('reason'),
    ...deliveryColumns(),
  },
  (table) => [
    index('outbox_actions_pending_idx').on(table.status, table.requestId, table.outboxId),
  ],
);

/** Backfill checkpoints: each finished window of a backfill, so a rerun resumes after it. */
export const backfillWindows = sqliteTable(
  'backfill_windows',
  {
    /** Identifies a backfill by its arguments (range, states, chunk size). */
    backfillKey: text('backfill_key').notNull(),
    windowFrom: text('window_from').notNull(),
    windowTo: text('window_to').notNull(),
    finishedAt: text('finished_at').notNull(),
    requestsStored: integer('requests_stored').notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.backfillKey, table.windowFrom] })],
);
