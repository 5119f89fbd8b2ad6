import type { Sql } from '../sql.js';

/** Backfill checkpoints: which windows of which backfill are finished. */
export function createCheckpointStore(sql: Sql) {
  return {
    /** Start times (canonical ISO) of the finished windows of a backfill. */
    async finishedWindows(key: string): Promise<Set<string>> {
      const rows = await sql.all<{ window_from: string }>(
        'SELECT window_from FROM backfill_windows WHERE backfill_key = @key',
        { key },
      );
      return new Set(rows.map((row) => row.window_from));
    },
    /** Records a finished window; call in the transaction that stores its last batch. */
    async markFinished(row: {
      key: string;
      from: string;
      to: string;
      at: string;
      requestsStored: number;
    }): Promise<void> {
      await sql.run(
        `INSERT INTO backfill_windows (backfill_key, window_from, window_to, finished_at, requests_stored)
         VALUES (@backfill_key, @window_from, @window_to, @finished_at, @requests_stored)
         ON CONFLICT (backfill_key, window_from) DO UPDATE SET window_to = excluded.window_to,
           finished_at = excluded.finished_at, requests_stored = excluded.requests_stored`,
        {
          backfill_key: row.key,
          window_from: row.from,
          window_to: row.to,
          finished_at: row.at,
          requests_stored: row.requestsStored,
        },
      );
    },
    /** Forgets a backfill's checkpoints (`--restart`). */
    async clear(key: string): Promise<void> {
      await sql.run('DELETE FROM backfill_windows WHERE backfill_key = @key', { key });
    },
  };
}

/** The checkpoint store's interface. */
export type CheckpointStore = ReturnType<typeof createCheckpointStore>;
