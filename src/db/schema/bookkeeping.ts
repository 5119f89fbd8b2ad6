import { c, table, type RowOf } from './columns.js';

/** One row per poll cycle, backfill or other run, with its counts. */
export const syncRuns = table(
  'sync_runs',
  {
    run_id: c.id(),
    /** poll, backfill. */
    kind: c.text().notNull(),
    started_at: c.timestamp().notNull(),
    finished_at: c.timestamp(),
    /** running, ok, partial (some requests failed and will be retried), failed, aborted. */
    status: c.text().notNull(),
    window_from: c.timestamp(),
    window_to: c.timestamp(),
    list_calls: c.integer().notNull().default(0),
    detail_calls: c.integer().notNull().default(0),
    retries: c.integer().notNull().default(0),
    requests_seen: c.integer().notNull().default(0),
    requests_new: c.integer().notNull().default(0),
    requests_changed: c.integer().notNull().default(0),
    requests_unchanged: c.integer().notNull().default(0),
    requests_unavailable: c.integer().notNull().default(0),
    requests_failed: c.integer().notNull().default(0),
    requests_quarantined: c.integer().notNull().default(0),
    /** Members of this run's records that were missing, retyped or unknown (see schema_drift). */
    schema_drift: c.integer().notNull().default(0),
    error: c.text(),
    /** The process that ran it: a 'running' row whose process is gone was killed. */
    pid: c.integer(),
    host: c.text(),
  },
  { indexes: { sync_runs_kind_started_idx: ['kind', 'started_at'] } },
);

/** Records the service sent that failed validation: kept apart, retried on later cycles. */
export const quarantine = table(
  'quarantine',
  {
    /** The request id, or `unknown:<hash>` for a record without a usable id. */
    record_key: c.text().primaryKey(),
    request_id: c.text(),
    source: c.text().notNull(),
    reason: c.text().notNull(),
    raw_payload: c.json().notNull(),
    first_seen_at: c.timestamp().notNull(),
    last_seen_at: c.timestamp().notNull(),
    seen_count: c.integer().notNull().default(1),
  },
  {
    // Every record stored clears its request's quarantine, and every held-digest read asks each
    // row whether its request is quarantined, both by request_id: without an index each was a
    // scan of the whole quarantine, per record.
    indexes: { quarantine_request_idx: ['request_id'] },
  },
);

/**
 * Members the service sent differently from its documented shape: missing, of another type, or
 * unknown. Type names only, never values. One row per request and member (per member alone for
 * unknown members, which repeat on every record).
 */
export const schemaDrift = table(
  'schema_drift',
  {
    /** source, request (empty for unknown members), member and problem, joined. */
    drift_key: c.text().primaryKey(),
    /** The request it was seen on (for an unknown member: the first one). */
    request_id: c.text(),
    /** poll, backfill or webhook. */
    source: c.text().notNull(),
    /** Dotted path of the member, such as pickup_location.lat. */
    member: c.text().notNull(),
    /** missing, type or unknown. */
    problem: c.text().notNull(),
    /** The documented type name; null for an unknown member. */
    expected: c.text(),
    /** The received type name; null for a missing member. */
    received: c.text(),
    first_seen_at: c.timestamp().notNull(),
    last_seen_at: c.timestamp().notNull(),
    count: c.integer().notNull().default(1),
  },
  {
    indexes: {
      schema_drift_member_idx: ['member', 'problem'],
      schema_drift_request_idx: ['request_id'],
    },
  },
);

/**
 * Stretches in which the webhook receiver could not accept or store deliveries: the daemon was
 * down (from its last heartbeat to its next start), or storing failed. The service retries a
 * delivery for about 64 s and then drops it, so a longer gap may have lost events.
 */
export const intakeGaps = table(
  'intake_gaps',
  {
    gap_id: c.id(),
    started_at: c.timestamp().notNull(),
    ended_at: c.timestamp().notNull(),
    seconds: c.real().notNull(),
    /** Open requests (awaiting or accepted, pickup ahead) when the gap was recorded. */
    requests_at_risk: c.integer().notNull().default(0),
    /** daemon_down or store_failed. */
    reason: c.text().notNull(),
    /** 1 when longer than TRANSPORT_INTAKE_GAP_ALARM_SECONDS: events may have been lost. */
    is_alarmed: c.boolean().notNull().default(0),
    /** When an operator acknowledged it (`transport-sync gaps --ack`). */
    reviewed_at: c.timestamp(),
  },
  { indexes: { intake_gaps_started_idx: ['started_at'] } },
);

/** Small key/value facts the daemon keeps (owner lease, last successful cycle, heartbeat). */
export const syncState = table('sync_state', {
  key: c.text().primaryKey(),
  value: c.text().notNull(),
  updated_at: c.timestamp().notNull().default('now'),
});

/** Backfill checkpoints: each finished window of a backfill, so a rerun resumes after it. */
export const backfillWindows = table(
  'backfill_windows',
  {
    /** Identifies a backfill by its arguments (range, states, chunk size). */
    backfill_key: c.text().notNull(),
    window_from: c.timestamp().notNull(),
    window_to: c.timestamp().notNull(),
    finished_at: c.timestamp().notNull(),
    requests_stored: c.integer().notNull().default(0),
  },
  { primaryKey: ['backfill_key', 'window_from'] },
);

/** A sync_runs row. */
export type SyncRunRow = RowOf<typeof syncRuns>;
/** An intake_gaps row. */
export type IntakeGapRow = RowOf<typeof intakeGaps>;
