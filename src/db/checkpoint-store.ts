import type Database from 'better-sqlite3';

/** Backfill checkpoints: which windows of which backfill are finished. */
export function createCheckpointStore(sqlite: Database.Database) {
  const finished = sqlite.prepare(
    'SELECT window_from FROM backfill_windows WHERE backfill_key = ?',
  );
  const insert = sqlite.prepare(
    `INSERT OR REPLACE INTO backfill_windows (backfill_key, window_from, window_to, finished_at, requests_stored)
     VALUES (@backfill_key, @window_from, @window_to, @finished_at, @requests_stored)`,
  );
  const clear = sqlite.prepare('DELETE FROM backfill_windows WHERE backfill_key = ?');
  return {
    /** Start times (canonical ISO) of the finished windows of a backfill. */
    finishedWindows(key: string): Set<string> {
      return new Set(
        (finished.all(key) as { window_from: string }[]).map((row) => row.window_from),
      );
    },
    /** Records a finished window; call in the transaction that stores its last batch. */
    markFinished(row: {
      key: string;
      from: string;
      to: string;
      at: string;
      requestsStored: number;
    }): void {
      insert.run({
        backfill_key: row.key,
        window_from: row.from,
        window_to: row.to,
        finished_at: row.at,
        requests_stored: row.requestsStored,
      });
    },
    /** Forgets a backfill's checkpoints (`--restart`). */
    clear(key: string): void {
      clear.run(key);
    },
  };
}

/** The checkpoint store's interface. */
export type CheckpointStore = ReturnType<typeof createCheckpointStore>;
