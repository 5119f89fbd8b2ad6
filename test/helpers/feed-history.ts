import { openDatabase } from '../../src/db/open.js';
import { isoFromMs } from '../../src/time.js';
import { execute, queryAll, reading } from './engine.js';
import { feedPositions } from './feed.js';

/*
 * The change feed of a mirror a daemon process writes, read and aged from outside, as an
 * operator's SQL would: for tests of the sinks and of retention with the processes running.
 */

const DAY_MS = 86_400_000;

/** Every position of the feed kept in the mirror at `location`, in order. */
export function feedPositionsAt(location: string): Promise<number[]> {
  return reading(location, feedPositions);
}

/** The position each sink last acknowledged, by cursor name (`webhook`, `nats`, `notify`). */
export async function feedCursorsAt(location: string): Promise<Record<string, number>> {
  const rows = await reading(location, (db) =>
    queryAll<{ key: string; value: string }>(
      db,
      "SELECT key, value FROM sync_state WHERE key LIKE 'feed_cursor:%'",
    ),
  );
  return Object.fromEntries(
    rows.map((row) => [row.key.slice('feed_cursor:'.length), Number(row.value)]),
  );
}

/**
 * Makes every change logged so far `days` old, when observed and when committed (retention goes
 * by the first); resolves to their positions. Changes committed after it keep their time.
 */
export async function ageFeed(location: string, days: number): Promise<number[]> {
  const db = await openDatabase({ location, shouldMigrate: false });
  try {
    const positions = await feedPositions(db);
    const at = isoFromMs(Date.now() - days * DAY_MS);
    await execute(
      db,
      'UPDATE request_changes SET observed_at = @at, committed_at = @at WHERE change_id <= @last',
      { at, last: positions.at(-1) ?? 0 },
    );
    return positions;
  } finally {
    await db.close();
  }
}
