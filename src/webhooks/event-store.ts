import type Database from 'better-sqlite3';
import type { EnvelopeKind, EventRow } from './envelope.js';
import { PROFILE_COLUMNS, type ProfileRow } from './normalize-webhook.js';

/** A stored event waiting to be applied. */
export interface PendingEvent {
  event_id: string;
  envelope: EnvelopeKind;
  payload_json: string;
  attempts: number;
}

/**
 * SQL of webhook_events and request_profiles. Callers own transactions: the receiver's is one
 * short group of inserts before its 2xx, the applier's one event and its processed mark.
 */
export function createEventStore(sqlite: Database.Database) {
  const statements = {
    insert: sqlite.prepare(
      `INSERT OR IGNORE INTO webhook_events (event_id, envelope, event_timestamp, service_request_id,
         request_status, action, event_type, payload_json, received_at)
       VALUES (@event_id, @envelope, @event_timestamp, @service_request_id, @request_status,
         @action, @event_type, @payload_json, @received_at)`,
    ),
    pending: sqlite.prepare(
      `SELECT event_id, envelope, payload_json, attempts FROM webhook_events
       WHERE processed_at IS NULL AND event_id > @after ORDER BY event_id LIMIT @limit`,
    ),
    processed: sqlite.prepare(
      `UPDATE webhook_events SET processed_at = @at, error = @error, attempts = attempts + 1
       WHERE event_id = @event_id`,
    ),
    failed: sqlite.prepare(
      'UPDATE webhook_events SET error = @error, attempts = attempts + 1 WHERE event_id = @event_id',
    ),
    // Only events that said something about the request count: data, or "unavailable".
    superseded: sqlite.prepare(
      `SELECT event_id FROM webhook_events
       WHERE service_request_id = @request_id AND envelope = 'v2' AND event_id > @event_id
         AND processed_at IS NOT NULL AND error IS NULL
         AND (request_status = 'UNAVAILABLE' OR json_type(payload_json, '$.data') = 'object')
       LIMIT 1`,
    ),
    upsertProfile: sqlite.prepare(
      `INSERT INTO request_profiles (${[...PROFILE_COLUMNS, 'event_id', 'updated_at'].join(', ')})
       VALUES (${[...PROFILE_COLUMNS, 'event_id', 'updated_at'].map((c) => `@${c}`).join(', ')})
       ON CONFLICT (request_id) DO UPDATE SET
       ${[...PROFILE_COLUMNS.slice(1), 'event_id', 'updated_at'].map((c) => `${c} = excluded.${c}`).join(', ')}
       WHERE excluded.event_id >= request_profiles.event_id`,
    ),
    pendingCount: sqlite.prepare(
      'SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NULL',
    ),
  };

  return {
    /** Stores a delivery; false when its event_id is already stored (a retried delivery). */
    insert(row: EventRow): boolean {
      return statements.insert.run(row).changes > 0;
    },
    /** Up to `limit` unprocessed events after `after`, in event_id order. */
    pending(after: string, limit: number): PendingEvent[] {
      return statements.pending.all({ after, limit }) as PendingEvent[];
    },
    /** Marks an event done: applied, skipped, or (with `error`) failed for good. */
    markProcessed(eventId: string, at: string, error: string | null = null): void {
      statements.processed.run({ event_id: eventId, at, error });
    },
    /** Records a failed attempt; the event stays pending and is tried again. */
    markFailed(eventId: string, error: string): void {
      statements.failed.run({ event_id: eventId, error });
    },
    /** The id of a later v2 event about the request that is already applied, if any. */
    supersededBy(requestId: string, eventId: string): string | undefined {
      const row = statements.superseded.get({ request_id: requestId, event_id: eventId }) as
        { event_id: string } | undefined;
      return row?.event_id;
    },
    /** Writes a profile unless a later event already wrote it; true when written. */
    writeProfile(profile: ProfileRow, eventId: string, updatedAt: string): boolean {
      return (
        statements.upsertProfile.run({ ...profile, event_id: eventId, updated_at: updatedAt })
          .changes > 0
      );
    },
    /** Events not yet processed. */
    pendingCount(): number {
      return (statements.pendingCount.get() as { n: number }).n;
    },
  };
}

/** The webhook event store's interface. */
export type EventStore = ReturnType<typeof createEventStore>;
