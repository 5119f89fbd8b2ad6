import { hasTable } from '../db/tables.js';
import type Database from 'better-sqlite3';
import { Cron } from 'croner';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { isoFromMs } from '../time.js';

/** Rows deleted per transaction: each batch holds the write lock only briefly. */
const BATCH_ROWS = 5000;

/** Rows pruned, per table. */
export interface PruneCounts {
  syncRuns: number;
  webhookEvents: number;
  requestChanges: number;
}

/**
 * What is history, and when it is old. Only finished runs and processed events go: a running
 * run or an event still to be applied is work in progress, not history. A pruned event's id no
 * longer dedupes a repeat delivery, which is harmless: the service gives up on a delivery after
 * about a minute. The requests themselves are never pruned.
 */
const RULES = [
  {
    key: 'syncRuns',
    table: 'sync_runs',
    where: "finished_at IS NOT NULL AND status <> 'running' AND finished_at < @cutoff",
  },
  {
    key: 'webhookEvents',
    table: 'webhook_events',
    where: 'processed_at IS NOT NULL AND received_at < @cutoff',
  },
  { key: 'requestChanges', table: 'request_changes', where: 'observed_at < @cutoff' },
] as const;

/**
 * Deletes history older than `retentionDays` before `now`: finished sync_runs, processed
 * webhook_events and request_changes. 0 days keeps everything. Timestamps are canonical ISO UTC
 * text, so comparing them as text compares them as times. Deletes in batches so the daemon's
 * writers never wait long behind a first prune of years of history.
 */
export function pruneHistory({
  sqlite,
  retentionDays,
  now,
}: {
  sqlite: Database.Database;
  retentionDays: number;
  /** Epoch milliseconds. */
  now: number;
}): PruneCounts {
  const counts: PruneCounts = { syncRuns: 0, webhookEvents: 0, requestChanges: 0 };
  if (retentionDays <= 0) return counts;
  const cutoff = isoFromMs(now - retentionDays * 86_400_000);
  for (const rule of RULES) {
    if (!hasTable(sqlite, rule.table)) continue;
    const remove = sqlite.prepare(
      `DELETE FROM ${rule.table} WHERE rowid IN
         (SELECT rowid FROM ${rule.table} WHERE ${rule.where} LIMIT ${BATCH_ROWS})`,
    );
    const batch = sqlite.transaction(() => remove.run({ cutoff }).changes);
    for (;;) {
      const deleted = batch.immediate();
      counts[rule.key] += deleted;
      if (deleted < BATCH_ROWS) break;
    }
  }
  return counts;
}

/** The cutoff `pruneHistory` uses, for messages. */
export function pruneCutoff(retentionDays: number, now: number): string | null {
  return retentionDays > 0 ? isoFromMs(now - retentionDays * 86_400_000) : null;
}

/**
 * Prunes once a day (03:17 local time by default: off the hour, when dispatch is quiet) for the
 * daemon. A failure is logged and retried the next day; it never stops the daemon. Returns stop.
 */
export function startDailyPrune({
  sqlite,
  retentionDays,
  log,
  pattern = '17 3 * * *',
  now = Date.now,
}: {
  sqlite: Database.Database;
  retentionDays: number;
  log: Logger;
  pattern?: string;
  now?: () => number;
}): () => void {
  if (retentionDays <= 0) return () => undefined;
  const job = new Cron(pattern, { protect: true, unref: true }, () => {
    try {
      const counts = pruneHistory({ sqlite, retentionDays, now: now() });
      log.info({ ...counts, retentionDays }, 'history pruned');
    } catch (error) {
      log.error({ err: describeError(error) }, 'pruning history failed; retried tomorrow');
    }
  });
  return () => job.stop();
}
