import { c, table } from './columns.js';

/** Every webhook delivery accepted, stored before the 2xx is sent; applied afterwards from here. */
export const webhookEvents = table(
  'webhook_events',
  {
    event_id: c.text().primaryKey(),
    /** v2 or v1: which envelope the delivery used. */
    envelope: c.text().notNull(),
    event_timestamp: c.timestamp(),
    service_request_id: c.text(),
    request_status: c.text(),
    action: c.text(),
    /** v1.0 envelopes: request.state.available, collection.state.updated, ... */
    event_type: c.text(),
    payload_json: c.json().notNull(),
    received_at: c.timestamp().notNull(),
    /** Null until applied; set also when applying failed for good (see error). */
    processed_at: c.timestamp(),
    error: c.text(),
    attempts: c.integer().notNull().default(0),
  },
  {
    indexes: {
      webhook_events_pending_idx: ['processed_at', 'event_id'],
      webhook_events_request_idx: ['service_request_id', 'event_id'],
    },
  },
);

/** Which envelope a delivery used: v2.0, v1.0, or a shape this version does not know. */
export type EnvelopeKind = 'v2' | 'v1' | 'unknown';

/** A webhook_events row as the receiver inserts it. */
export interface EventRow {
  event_id: string;
  envelope: EnvelopeKind;
  event_timestamp: string | null;
  service_request_id: string | null;
  request_status: string | null;
  action: string | null;
  event_type: string | null;
  payload_json: string;
  received_at: string;
}
