import { Cron } from 'croner';
import type { Connection } from '../db/sql.js';
import { pruneHistory } from '../db/store/retention.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';

export { pruneCutoff, pruneHistory, type PruneCounts } from '../db/store/retention.js';

/**
 * Prunes once a day (03:17 local time by default: off the hour, when dispatch is quiet) for the
 * daemon. A failure is logged and retried the next day; it never stops the daemon. Returns stop.
 */
export function startDailyPrune({
  db,
  retentionDays,
  feedSinks = [],
  log,
  pattern = '17 3 * * *',
  now = Date.now,
}: {
  db: Connection;
  retentionDays: number;
  /** The cursor names of the configured feed sinks (see pruneHistory). */
  feedSinks?: readonly string[];
  log: Logger;
  pattern?: string;
  now?: () => number;
}): () => void {
  if (retentionDays <= 0) return () => undefined;
  const job = new Cron(pattern, { protect: true, unref: true }, async () => {
    try {
      const counts = await pruneHistory({ db, retentionDays, feedSinks, now: now() });
      log.info({ ...counts, retentionDays }, 'history pruned');
    } catch (error) {
      log.error({ err: describeError(error) }, 'pruning history failed; retried tomorrow');
    }
  });
  return () => job.stop();
}
