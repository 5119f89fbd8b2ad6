import { isoFromMs } from '../../time.js';
import type { Connection } from '../sql.js';
import { createFeedCursorStore } from './feed-cursor-store.js';

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
 * about a minute. A change a feed sink has not acknowledged is not history either: it waits for
 * the sink, however old (@held, the lowest cursor). The requests themselves are never pruned.
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
    where: 'observed_at < @cutoff AND change_id <= @held',
  },
] as const;

/** The cutoff `pruneHistory` uses, for messages. */
export function pruneCutoff(retentionDays: number, now: number): string | null {
  return retentionDays > 0 ? isoFromMs(now - retentionDays * 86_400_000) : null;
}

/**
 * The highest position every sink in `sinks` has acknowledged: what the change feed may prune.
 * A sink without a cursor yet holds everything.
 */
async function heldPosition(db: Connection, sinks: readonly string[]): Promise<number> {
  if (sinks.length === 0) return Number.MAX_SAFE_INTEGER;
  return db.read(async (sql) => {
    const cursors = createFeedCursorStore(sql);
    let held = Number.MAX_SAFE_INTEGER;
    // A sink without a cursor yet has acknowledged nothing.
    for (const sink of sinks) held = Math.min(held, (await cursors.get(sink)) ?? 0);
    return held;
  });
}

/**
 * Deletes history older than `retentionDays` before `now`: finished sync_runs, processed
 * webhook_events and request_changes, the last only up to what every configured feed sink
 * (`feedSinks`, their cursor names) has acknowledged. 0 days keeps everything. Deletes in batches
 * so the daemon's writers never wait long behind a first prune of years of history.
 */
export async function pruneHistory({
  db,
  retentionDays,
  now,
  feedSinks = [],
}: {
  db: Connection;
  retentionDays: number;
  /** Epoch milliseconds. */
  now: number;
  feedSinks?: readonly string[];
}): Promise<PruneCounts> {
  const counts: PruneCounts = { syncRuns: 0, webhookEvents: 0, requestChanges: 0 };
  const cutoff = pruneCutoff(retentionDays, now);
  if (cutoff === null) return counts;
  const held = await heldPosition(db, feedSinks);
  for (const rule of RULES) {
    if (!(await db.hasTable(rule.table))) continue;
    const remove = `DELETE FROM ${rule.table} WHERE ${rule.id} IN
      (SELECT ${rule.id} FROM ${rule.table} WHERE ${rule.where} LIMIT ${BATCH_ROWS})`;
    for (;;) {
      const deleted = await db.transaction((sql) => sql.run(remove, { cutoff, held }));
      counts[rule.key] += deleted;
      if (deleted < BATCH_ROWS) break;
    }
  }
  return counts;
}
