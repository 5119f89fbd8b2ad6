import type { Sql } from '../sql.js';
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
