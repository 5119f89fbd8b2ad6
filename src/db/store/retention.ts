import { isoFromMs } from '../../time.js';
import type { Connection } from '../sql.js';

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
    id: 'run_id',
    where: "finished_at IS NOT NULL AND status <> 'running' AND finished_at < @cutoff",
  },
  {
    key: 'webhookEvents',
    table: 'webhook_events',
    id: 'event_id',
    where: 'processed_at IS NOT NULL AND received_at < @cutoff',
  },
  {
    key: 'requestChanges',
    table: 'request_changes',
    id: 'change_id',
    where: 'observed_at < @cutoff',
  },
] as const;

/** The cutoff `pruneHistory` uses, for messages. */
export function pruneCutoff(retentionDays: number, now: number): string | null {
  return retentionDays > 0 ? isoFromMs(now - retentionDays * 86_400_000) : null;
}

/**
 * Deletes history older than `retentionDays` before `now`: finished sync_runs, processed
 * webhook_events and request_changes. 0 days keeps everything. Deletes in batches so the daemon's
 * writers never wait long behind a first prune of years of history.
 */
export async function pruneHistory({
  db,
  retentionDays,
  now,
}: {
  db: Connection;
  retentionDays: number;
  /** Epoch milliseconds. */
  now: number;
}): Promise<PruneCounts> {
  const counts: PruneCounts = { syncRuns: 0, webhookEvents: 0, requestChanges: 0 };
  const cutoff = pruneCutoff(retentionDays, now);
  if (cutoff === null) return counts;
  for (const rule of RULES) {
    if (!(await db.hasTable(rule.table))) continue;
    const remove = `DELETE FROM ${rule.table} WHERE ${rule.id} IN
      (SELECT ${rule.id} FROM ${rule.table} WHERE ${rule.where} LIMIT ${BATCH_ROWS})`;
    for (;;) {
      const deleted = await db.transaction((sql) => sql.run(remove, { cutoff }));
      counts[rule.key] += deleted;
      if (deleted < BATCH_ROWS) break;
    }
  }
  return counts;
}
