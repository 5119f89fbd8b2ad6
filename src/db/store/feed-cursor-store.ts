import type { Connection, Sql } from '../sql.js';
import { createSyncStateStore } from './sync-state-store.js';

/** The sync_state key of a feed sink's cursor. */
export const feedCursorKey = (sink: string) => `feed_cursor:${sink}`;

/**
 * The change feed's durable cursors: per sink, the last position it acknowledged, kept in
 * sync_state (key `feed_cursor:<sink>`, the position as its value) so an operator can read or
 * move one with SQL.
 */
export function createFeedCursorStore(sql: Sql) {
  const state = createSyncStateStore(sql);
  return {
    /** The sink's last acknowledged position, or undefined before its first delivery. */
    async get(sink: string): Promise<number | undefined> {
      const value = await state.get(feedCursorKey(sink));
      return value === undefined ? undefined : Number(value);
    },
    set: (sink: string, position: number, at: string) =>
      state.set(feedCursorKey(sink), String(position), at),
  };
}

/** How far behind the feed one sink is. `status --json` keys: add, never rename. */
export interface FeedSinkLag {
  sink: string;
  /** The last position it acknowledged (0: none yet). */
  position: number;
  /** The feed's last position. */
  last_position: number;
  /** Changes after its position, waiting for it. */
  lag_changes: number;
  /** Age of the oldest change waiting for it; 0 when it has them all. */
  lag_seconds: number;
  /** When its cursor last moved, or null before its first delivery. */
  cursor_updated_at: string | null;
}

/** How far behind the feed each of `sinks` is, at `nowMs`. Reads only. */
export async function readFeedLag(
  db: Connection,
  sinks: readonly string[],
  nowMs: number,
): Promise<FeedSinkLag[]> {
  if (sinks.length === 0 || !(await db.hasTable('request_changes'))) return [];
  return db.read(
    async (sql) => {
      const state = createSyncStateStore(sql);
      const last = await sql.get<{ last: number | null }>(
        'SELECT max(change_id) AS last FROM request_changes',
      );
      const lastPosition = Number(last?.last ?? 0);
      const lags: FeedSinkLag[] = [];
      for (const sink of sinks) {
        const cursor = await state.entry(feedCursorKey(sink));
        const position = cursor === undefined ? 0 : Number(cursor.value);
        const waiting = await sql.get<{ n: number; oldest: string | null }>(
          `SELECT count(*) AS n,
           (SELECT COALESCE(committed_at, observed_at) FROM request_changes
             WHERE change_id > @position ORDER BY change_id LIMIT 1) AS oldest
         FROM request_changes WHERE change_id > @position`,
          { position },
        );
        const oldestMs = waiting?.oldest ? Date.parse(waiting.oldest) : Number.NaN;
        lags.push({
          sink,
          position,
          last_position: lastPosition,
          lag_changes: Number(waiting?.n ?? 0),
          lag_seconds: Number.isFinite(oldestMs) ? Math.max(0, nowMs - oldestMs) / 1000 : 0,
          cursor_updated_at: cursor?.updated_at ?? null,
        });
      }
      return lags;
    },
    { isSnapshot: true },
  );
}
