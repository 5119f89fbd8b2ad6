import { hasTable } from './tables.js';
import type Database from 'better-sqlite3';

/** One intake_gaps row. */
export interface IntakeGapRow {
  gap_id: number;
  started_at: string;
  ended_at: string;
  seconds: number;
  requests_at_risk: number;
  reason: string;
  is_alarmed: number;
  reviewed_at: string | null;
}

/**
 * Open requests whose webhook events a gap may have lost: awaiting or accepted, available, with
 * their pickup (agreed, else requested) after the gap began, and no event received since it ended.
 * An event received just before the gap says nothing of the ones the gap may have swallowed; one
 * received after it carries the record as it is now.
 */
const AT_RISK = `
  SELECT r.request_id FROM requests r
  WHERE r.unavailable_at IS NULL AND r.list_state IN ('awaiting', 'accepted')
    AND coalesce(r.transport_agreed_for_time, r.transport_pickup_time) > @since
    AND NOT EXISTS (
      SELECT 1 FROM webhook_events e
      WHERE e.service_request_id = r.request_id AND e.received_at >= @ended)
  ORDER BY coalesce(r.transport_agreed_for_time, r.transport_pickup_time), r.request_id`;

/** The intake_gaps table and the requests a gap puts at risk. Callers own write transactions. */
export function createIntakeGapStore(sqlite: Database.Database) {
  const insert = sqlite.prepare(
    `INSERT INTO intake_gaps (started_at, ended_at, seconds, requests_at_risk, reason, is_alarmed)
     VALUES (@started_at, @ended_at, @seconds, @requests_at_risk, @reason, @is_alarmed)`,
  );
  const atRisk = sqlite.prepare(AT_RISK);
  const ack = sqlite.prepare(
    'UPDATE intake_gaps SET reviewed_at = ? WHERE is_alarmed = 1 AND reviewed_at IS NULL',
  );
  return {
    /** Records a gap; returns its id. */
    add(gap: Omit<IntakeGapRow, 'gap_id' | 'reviewed_at'>): number {
      return Number(insert.run(gap).lastInsertRowid);
    },
    /** Ids of the requests at risk from a gap from `since` to `ended` (canonical ISO). */
    requestsAtRisk(since: string, ended: string): string[] {
      return (atRisk.all({ since, ended }) as { request_id: string }[]).map(
        (row) => row.request_id,
      );
    },
    /** Marks every alarmed gap reviewed; returns how many were. */
    acknowledge(at: string): number {
      return ack.run(at).changes;
    },
  };
}

/** The intake gap store's interface. */
export type IntakeGapStore = ReturnType<typeof createIntakeGapStore>;

/** The last gaps, newest first, and how many alarmed ones are unreviewed (read-only, for status). */
export function readIntakeGaps(
  sqlite: Database.Database,
  limit = 5,
): { unreviewed: number; last: IntakeGapRow[] } {
  if (!hasTable(sqlite, 'intake_gaps')) return { unreviewed: 0, last: [] };
  const unreviewed = sqlite
    .prepare('SELECT count(*) AS n FROM intake_gaps WHERE is_alarmed = 1 AND reviewed_at IS NULL')
    .get() as { n: number };
  const last = sqlite
    .prepare('SELECT * FROM intake_gaps ORDER BY gap_id DESC LIMIT ?')
    .all(limit) as IntakeGapRow[];
  return { unreviewed: unreviewed.n, last };
}

/** Requests at risk from a gap from `since` to `ended`, read-only (status). */
export function readRequestsAtRisk(
  sqlite: Database.Database,
  since: string,
  ended: string,
): string[] {
  return (sqlite.prepare(AT_RISK).all({ since, ended }) as { request_id: string }[]).map(
    (row) => row.request_id,
  );
}
