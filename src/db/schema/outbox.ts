import { c, table } from './columns.js';

/** The delivery bookkeeping both outbox tables carry. */
function deliveryColumns() {
  return {
    /** pending, sent or failed. */
    status: c.text().notNull().default('pending'),
    attempts: c.integer().notNull().default(0),
    last_error: c.text(),
    next_attempt_at: c.timestamp(),
    sent_at: c.timestamp(),
    created_at: c.timestamp().notNull().default('now'),
  };
}

/**
 * GPS samples other programs queue for the service, with plain SQL. The daemon sends them per
 * request in timestamp order, at most 200 per call.
 */
export const outboxLocations = table(
  'outbox_locations',
  {
    outbox_id: c.id(),
    request_id: c.text().notNull(),
    lat: c.real(),
    lng: c.real(),
    alt: c.real(),
    speed: c.real(),
    /** Unix epoch seconds, fractions allowed, as the service takes it. */
    timestamp: c.real(),
    ...deliveryColumns(),
  },
  { indexes: { outbox_locations_pending_idx: ['status', 'request_id', 'timestamp'] } },
);

/**
 * Provider actions other programs queue with plain SQL: accept, decline, state, change_request,
 * best_time. Sent per request in the order inserted.
 */
export const outboxActions = table(
  'outbox_actions',
  {
    outbox_id: c.id(),
    request_id: c.text().notNull(),
    /** accept, decline, state, change_request or best_time. */
    kind: c.text().notNull(),
    /** accept and decline: response_notes (at most 450 characters). */
    notes: c.text(),
    /** state: the state name (en_route, arrived, on_board, ...). */
    state_name: c.text(),
    /** state: its timestamp; change_request: agreed_dt; best_time: proposed_agreed_dt (ISO 8601). */
    at: c.timestamp(),
    /** change_request: change_reason (at most 450 characters). */
    reason: c.text(),
    ...deliveryColumns(),
  },
  { indexes: { outbox_actions_pending_idx: ['status', 'request_id', 'outbox_id'] } },
);
