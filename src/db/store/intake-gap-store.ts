import type { IntakeGapRow } from '../schema/index.js';
import type { Connection, Sql } from '../sql.js';

export type { IntakeGapRow };

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

const requestsAtRisk = async (sql: Sql, since: string, ended: string) =>
  (await sql.all<{ request_id: string }>(AT_RISK, { since, ended })).map((row) => row.request_id);

/** The intake_gaps table and the requests a gap puts at risk. */
export function createIntakeGapStore(sql: Sql) {
  return {
    /** Records a gap; returns its id. */
    async add(gap: Omit<IntakeGapRow, 'gap_id' | 'reviewed_at'>): Promise<number> {
      const row = await sql.get<{ gap_id: number }>(
        `INSERT INTO intake_gaps (started_at, ended_at, seconds, requests_at_risk, reason, is_alarmed)
         VALUES (@started_at, @ended_at, @seconds, @requests_at_risk, @reason, @is_alarmed)
         RETURNING gap_id`,
        gap,
      );
      return row!.gap_id;
    },
    /** Ids of the requests at risk from a gap from `since` to `ended` (canonical ISO). */
    requestsAtRisk: (since: string, ended: string) => requestsAtRisk(sql, since, ended),
    /** Marks every alarmed gap reviewed; returns how many were. */
    acknowledge: (at: string) =>
      sql.run('UPDATE intake_gaps SET reviewed_at = @at WHERE is_alarmed AND reviewed_at IS NULL', {
        at,
      }),
  };
}

/** The intake gap store's interface. */
export type IntakeGapStore = ReturnType<typeof createIntakeGapStore>;

/** The last gaps, newest first, and how many alarmed ones are unreviewed (read-only, for status). */
export async function readIntakeGaps(
  db: Connection,
  limit = 5,
): Promise<{ unreviewed: number; last: IntakeGapRow[] }> {
  if (!(await db.hasTable('intake_gaps'))) return { unreviewed: 0, last: [] };
  return db.read(async (sql) => {
    const unreviewed = await sql.get<{ n: number }>(
      'SELECT count(*) AS n FROM intake_gaps WHERE is_alarmed AND reviewed_at IS NULL',
    );
    const last = await sql.all<IntakeGapRow>(
      'SELECT * FROM intake_gaps ORDER BY gap_id DESC LIMIT @limit',
      { limit },
    );
    return { unreviewed: unreviewed!.n, last };
  });
}

/** Requests at risk from a gap from `since` to `ended`, read-only (status). */
export function readRequestsAtRisk(db: Connection, since: string, ended: string) {
  return db.read((sql) => requestsAtRisk(sql, since, ended));
}

/** Intake gaps by kind (read-only, for metrics); none when the table does not exist yet. */
export async function countIntakeGaps(
  db: Connection,
): Promise<{ unreviewed: number; alarmed: number; quiet: number }> {
  if (!(await db.hasTable('intake_gaps'))) return { unreviewed: 0, alarmed: 0, quiet: 0 };
  const row = await db.read((sql) =>
    sql.get<{ unreviewed: number; alarmed: number; quiet: number }>(
      `SELECT
         coalesce(sum(CASE WHEN is_alarmed AND reviewed_at IS NULL THEN 1 ELSE 0 END), 0) AS unreviewed,
         coalesce(sum(CASE WHEN is_alarmed THEN 1 ELSE 0 END), 0) AS alarmed,
         coalesce(sum(CASE WHEN is_alarmed THEN 0 ELSE 1 END), 0) AS quiet
       FROM intake_gaps`,
    ),
  );
  return row!;
}
