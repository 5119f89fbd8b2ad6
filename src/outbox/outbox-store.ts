import type Database from 'better-sqlite3';

/**
 * SQL of the two outbox tables. Values are read as SQLite holds them (other programs write these
 * rows, so a "number" may be text); validation.ts decides what they are worth. Every update is
 * guarded by `status = 'pending'`, so an operator who sets a row to failed by hand wins.
 */

/** Bookkeeping columns both tables share. */
interface DeliveryColumns {
  outbox_id: number;
  request_id: string;
  attempts: number;
  last_error: string | null;
}

/** An outbox_locations row as stored. */
export interface LocationRow extends DeliveryColumns {
  lat: unknown;
  lng: unknown;
  alt: unknown;
  speed: unknown;
  timestamp: unknown;
}

/** An outbox_actions row as stored. */
export interface ActionRow extends DeliveryColumns {
  kind: unknown;
  notes: unknown;
  state_name: unknown;
  at: unknown;
  reason: unknown;
}

type Table = 'outbox_locations' | 'outbox_actions';

function deliveryStatements(sqlite: Database.Database, table: Table) {
  const claim = sqlite.prepare(
    `UPDATE ${table} SET attempts = attempts + 1, last_error = @text
     WHERE outbox_id = @id AND status = 'pending'`,
  );
  const sent = sqlite.prepare(
    `UPDATE ${table} SET status = 'sent', sent_at = @at, last_error = @text, next_attempt_at = NULL
     WHERE outbox_id = @id AND status = 'pending'`,
  );
  const failed = sqlite.prepare(
    `UPDATE ${table} SET status = 'failed', last_error = @text, next_attempt_at = NULL
     WHERE outbox_id = @id AND status = 'pending'`,
  );
  const retry = sqlite.prepare(
    `UPDATE ${table} SET last_error = @text, next_attempt_at = @at
     WHERE outbox_id = @id AND status = 'pending'`,
  );
  // A request waits while any of its pending rows waits: its rows go in order or not at all.
  const dueRequests = sqlite.prepare(
    `SELECT request_id FROM ${table} WHERE status = 'pending' GROUP BY request_id
     HAVING max(coalesce(next_attempt_at, '')) <= @now ORDER BY min(outbox_id)`,
  );
  const each =
    (statement: Database.Statement) =>
    (ids: readonly number[], text: string | null, at?: string) => {
      for (const id of ids) statement.run({ id, text, at: at ?? null });
    };
  return {
    /** Counts a send as started and says so in last_error, before the call leaves. */
    claim: each(claim),
    /** Marks rows sent at `at`; `text` is a note or null. */
    markSent: (ids: readonly number[], at: string, text: string | null = null) =>
      each(sent)(ids, text, at),
    /** Marks rows failed for good with the reason. */
    markFailed: (ids: readonly number[], text: string) => each(failed)(ids, text),
    /** Leaves rows pending until `at`, with the failure's text. */
    markRetry: (ids: readonly number[], text: string, at: string) => each(retry)(ids, text, at),
    /** Requests with pending rows none of which waits past `now`, oldest queued first. */
    dueRequests: (now: string) =>
      (dueRequests.all({ now }) as { request_id: string }[]).map((row) => row.request_id),
  };
}

/** Reads and writes of outbox_locations and outbox_actions; callers own the transactions. */
export function createOutboxStore(sqlite: Database.Database) {
  const pendingLocations = sqlite.prepare(
    `SELECT outbox_id, request_id, lat, lng, alt, speed, timestamp, attempts, last_error
     FROM outbox_locations WHERE status = 'pending' AND request_id = ?
     ORDER BY timestamp, outbox_id LIMIT ?`,
  );
  const nextAction = sqlite.prepare(
    `SELECT outbox_id, request_id, kind, notes, state_name, at, reason, attempts, last_error
     FROM outbox_actions WHERE status = 'pending' AND request_id = ?
     ORDER BY outbox_id LIMIT 1`,
  );
  return {
    locations: {
      ...deliveryStatements(sqlite, 'outbox_locations'),
      /** The request's first `limit` pending samples in timestamp order. */
      pending: (requestId: string, limit: number) =>
        pendingLocations.all(requestId, limit) as LocationRow[],
    },
    actions: {
      ...deliveryStatements(sqlite, 'outbox_actions'),
      /** The request's oldest pending action. */
      next: (requestId: string) => nextAction.get(requestId) as ActionRow | undefined,
    },
  };
}

/** The outbox store's interface. */
export type OutboxStore = ReturnType<typeof createOutboxStore>;
