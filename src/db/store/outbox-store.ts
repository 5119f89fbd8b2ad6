import type { Sql } from '../sql.js';

/**
 * SQL of the two outbox tables. Values are read as the database holds them (other programs write
 * these rows: on SQLite a "number" may be text); the outbox's validation decides what they are
 * worth. Every update is
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
export interface OutboxLocationRow extends DeliveryColumns {
  lat: unknown;
  lng: unknown;
  alt: unknown;
  speed: unknown;
  timestamp: unknown;
}

/** An outbox_actions row as stored. */
export interface OutboxActionRow extends DeliveryColumns {
  kind: unknown;
  notes: unknown;
  state_name: unknown;
  at: unknown;
  reason: unknown;
}

type Table = 'outbox_locations' | 'outbox_actions';

function deliveryStatements(sql: Sql, table: Table) {
  // One statement for the whole array, its text the same whatever the array's length (prepared
  // once): PostgreSQL takes the ids as an array, SQLite as JSON text it unpacks.
  const isPostgres = sql.dialect.engine === 'postgres';
  const amongIds = isPostgres
    ? 'outbox_id = ANY(@ids::bigint[])'
    : 'outbox_id IN (SELECT value FROM json_each(@ids))';
  const update =
    (text: string) =>
    async (ids: readonly number[], note: string | null, at?: string): Promise<void> => {
      if (ids.length === 0) return;
      await sql.run(text, {
        ids: isPostgres ? ids : JSON.stringify(ids),
        text: note,
        at: at ?? null,
      });
    };
  return {
    /** Counts a send as started and says so in last_error, before the call leaves. */
    claim: update(
      `UPDATE ${table} SET attempts = attempts + 1, last_error = @text
       WHERE ${amongIds} AND status = 'pending'`,
    ),
    /** Marks rows sent at `at`; `text` is a note or null. */
    markSent: (ids: readonly number[], at: string, text: string | null = null) =>
      update(
        `UPDATE ${table} SET status = 'sent', sent_at = @at, last_error = @text,
           next_attempt_at = NULL WHERE ${amongIds} AND status = 'pending'`,
      )(ids, text, at),
    /** Marks rows failed for good with the reason. */
    markFailed: (ids: readonly number[], text: string) =>
      update(
        `UPDATE ${table} SET status = 'failed', last_error = @text, next_attempt_at = NULL
         WHERE ${amongIds} AND status = 'pending'`,
      )(ids, text),
    /** Leaves rows pending until `at`, with the failure's text. */
    markRetry: (ids: readonly number[], text: string, at: string) =>
      update(
        `UPDATE ${table} SET last_error = @text, next_attempt_at = @at
         WHERE ${amongIds} AND status = 'pending'`,
      )(ids, text, at),
    /**
     * Requests with pending rows none of which waits past `now`, oldest queued first. A request
     * waits while any of its pending rows waits: its rows go in order or not at all.
     */
    async dueRequests(now: string): Promise<string[]> {
      const rows = await sql.all<{ request_id: string }>(
        `SELECT request_id FROM ${table} WHERE status = 'pending' GROUP BY request_id
         HAVING coalesce(max(next_attempt_at) <= @now, true) ORDER BY min(outbox_id)`,
        { now },
      );
      return rows.map((row) => row.request_id);
    },
  };
}

/** Reads and writes of outbox_locations and outbox_actions, on one transaction's `sql`. */
export function createOutboxStore(sql: Sql) {
  return {
    locations: {
      ...deliveryStatements(sql, 'outbox_locations'),
      /** The request's first `limit` pending samples in timestamp order. */
      pending: (requestId: string, limit: number) =>
        sql.all<OutboxLocationRow>(
          `SELECT outbox_id, request_id, lat, lng, alt, speed, timestamp, attempts, last_error
           FROM outbox_locations WHERE status = 'pending' AND request_id = @id
           ORDER BY timestamp, outbox_id LIMIT @limit`,
          { id: requestId, limit },
        ),
    },
    actions: {
      ...deliveryStatements(sql, 'outbox_actions'),
      /** The request's oldest pending action. */
      next: (requestId: string) =>
        sql.get<OutboxActionRow>(
          `SELECT outbox_id, request_id, kind, notes, state_name, at, reason, attempts, last_error
           FROM outbox_actions WHERE status = 'pending' AND request_id = @id
           ORDER BY outbox_id LIMIT 1`,
          { id: requestId },
        ),
    },
  };
}

/** The outbox store's interface. */
export type OutboxStore = ReturnType<typeof createOutboxStore>;
